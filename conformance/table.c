/*
 * table.c — n4c-conformance --table: JSON reports (read with jansson) set
 * side by side, one column per report and one row per case, as Markdown
 * and, with --html FILE, as a self-contained HTML page.
 *
 * A report that is not one is refused with the place of the error: the
 * file, line and column where it stops being JSON, or the member that is
 * missing or of the wrong type (jansson's values carry no line numbers).
 * Two reports of the same backend, launch mode and rank count would make
 * two columns of the same name: refused too.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif
#include "runner.h"
#include "text.h"

#ifdef HAVE_JANSSON

struct report {
  const char *path;
  json_t *root;
  json_t *cases;    /* the array, validated */
  const char *backend, *launch;
  int nranks;
  int nccl_version; /* 0: not given */
  char label[96];   /* the column: backend/launch/nranks */
};

enum agreement { AGREE, AGREE_WHERE_RUN, DIFFER_DOCUMENTED, DIFFER };

struct row {
  const char *id, *claim;
  json_t **cell; /* per report; NULL: the case is not in that report */
  enum agreement agree;
};

struct table {
  struct report *r;
  int n;
  struct row *rows;
  size_t nrows;
  int count[DIFFER + 1];
};

/* Reading and checking the reports. */

static const char *type_name(const json_t *j)
{
  switch (json_typeof(j)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE: return "true";
  case JSON_FALSE: return "false";
  default: return "null";
  }
}

/* "FILE: not a conformance report: WHERE: WHAT". Returns -1. */
static int refuse(const char *path, const char *where, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static int refuse(const char *path, const char *where, const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "n4c-conformance: %s: not a conformance report: %s%s", path,
          where ? where : "", where ? ": " : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return -1;
}

/* Member `key` of obj must be a string (or absent, unless `required`).
 * *out: its text, or NULL when absent. */
static int get_string(const char *path, const char *where, json_t *obj, const char *key,
                      bool required, const char **out)
{
  json_t *v = json_object_get(obj, key);

  *out = NULL;
  if (v == NULL)
    return required ? refuse(path, where, "\"%s\" is missing", key) : 0;
  if (!json_is_string(v))
    return refuse(path, where, "\"%s\" is %s, not a string", key, type_name(v));
  *out = json_string_value(v);
  return 0;
}

static int get_int(const char *path, json_t *obj, const char *key, bool required, int lo,
                   int *out)
{
  json_t *v = json_object_get(obj, key);

  if (v == NULL)
    return required ? refuse(path, NULL, "\"%s\" is missing", key) : 0;
  if (!json_is_integer(v))
    return refuse(path, NULL, "\"%s\" is %s, not an integer", key, type_name(v));
  if (json_integer_value(v) < lo || json_integer_value(v) > 1000000000)
    return refuse(path, NULL, "\"%s\" is %" JSON_INTEGER_FORMAT ", out of range", key,
                  json_integer_value(v));
  *out = (int)json_integer_value(v);
  return 0;
}

static int check_case(const char *path, json_t *cases, size_t i)
{
  json_t *c = json_array_get(cases, i);
  char where[160];
  const char *id, *s;
  json_t *v;

  snprintf(where, sizeof where, "cases[%zu]", i);
  if (!json_is_object(c))
    return refuse(path, where, "is %s, not an object", type_name(c));
  if (get_string(path, where, c, "id", true, &id) != 0)
    return -1;
  if (*id == '\0')
    return refuse(path, where, "\"id\" is empty");
  snprintf(where, sizeof where, "cases[%zu] (%s)", i, id);
  if (get_string(path, where, c, "result", true, &s) != 0)
    return -1;
  if (strcmp(s, "pass") != 0 && strcmp(s, "skip") != 0 && strcmp(s, "fail") != 0)
    return refuse(path, where, "\"result\" is \"%s\", not \"pass\", \"skip\" or \"fail\"", s);
  if (get_string(path, where, c, "claim", false, &s) != 0 ||
      get_string(path, where, c, "detail", false, &s) != 0 ||
      get_string(path, where, c, "divergence", false, &s) != 0)
    return -1;
  if ((v = json_object_get(c, "seconds")) != NULL && !json_is_number(v))
    return refuse(path, where, "\"seconds\" is %s, not a number", type_name(v));
  for (size_t k = 0; k < i; k++)
    if (strcmp(json_string_value(json_object_get(json_array_get(cases, k), "id")), id) == 0)
      return refuse(path, where, "case %s is there twice (also cases[%zu])", id, k);
  return 0;
}

static int load(const char *path, struct report *r)
{
  json_error_t err;

  r->path = path;
  r->root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (r->root == NULL) {
    if (err.line >= 1)
      fprintf(stderr, "n4c-conformance: %s:%d:%d: not JSON: %s\n", path, err.line, err.column,
              err.text);
    else /* could not read it; the text names the file */
      fprintf(stderr, "n4c-conformance: %s\n", err.text);
    return -1;
  }
  if (!json_is_object(r->root))
    return refuse(path, NULL, "the top level is %s, not an object", type_name(r->root));
  if (get_string(path, NULL, r->root, "backend", true, &r->backend) != 0 ||
      get_int(path, r->root, "nranks", true, 1, &r->nranks) != 0 ||
      get_string(path, NULL, r->root, "launch", false, &r->launch) != 0 ||
      get_int(path, r->root, "nccl_version", false, 0, &r->nccl_version) != 0)
    return -1;
  if (r->launch == NULL) /* reports from before --mpi */
    r->launch = "threads";
  r->cases = json_object_get(r->root, "cases");
  if (r->cases == NULL)
    return refuse(path, NULL, "\"cases\" is missing");
  if (!json_is_array(r->cases))
    return refuse(path, NULL, "\"cases\" is %s, not an array", type_name(r->cases));
  for (size_t i = 0; i < json_array_size(r->cases); i++)
    if (check_case(path, r->cases, i) != 0)
      return -1;
  snprintf(r->label, sizeof r->label, "%s/%s/%d", r->backend, r->launch, r->nranks);
  return 0;
}

/* The rows. */

static const char *field(const json_t *c, const char *key)
{
  return json_string_value(json_object_get(c, key)); /* NULL if absent */
}

static json_t *find_case(const struct report *r, const char *id)
{
  size_t i;
  json_t *c;

  json_array_foreach(r->cases, i, c)
    if (strcmp(field(c, "id"), id) == 0)
      return c;
  return NULL;
}

/* A skip that says why the claim could not be checked on that backend: a
 * function missing from the linked NCCL version, or a part nccl4c was built
 * without there. It is not a disagreement; the row says so. */
static bool explained_skip(const json_t *c)
{
  const char *detail = field(c, "detail");

  return strcmp(field(c, "result"), "skip") == 0 && detail &&
         (strncmp(detail, "not supported by NCCL", 21) == 0 ||
          strncmp(detail, "nccl4c was built without", 24) == 0);
}

static enum agreement agreement(const struct table *t, const struct row *row)
{
  const char *first = NULL;
  bool differ = false, documented = false, gaps = false;

  for (int i = 0; i < t->n; i++) {
    const json_t *c = row->cell[i];
    const char *div;

    if (c == NULL)
      continue;
    if ((div = field(c, "divergence")) && *div)
      documented = true;
    if (explained_skip(c)) {
      gaps = true;
      continue;
    }
    if (first && strcmp(first, field(c, "result")) != 0)
      differ = true;
    first = first ? first : field(c, "result");
  }
  return differ ? (documented ? DIFFER_DOCUMENTED : DIFFER) : gaps ? AGREE_WHERE_RUN : AGREE;
}

/* Rows in the order of first appearance over the reports. */
static int make_rows(struct table *t)
{
  size_t max = 0;

  for (int i = 0; i < t->n; i++)
    max += json_array_size(t->r[i].cases);
  if ((t->rows = calloc(max ? max : 1, sizeof *t->rows)) == NULL)
    return -1;
  for (int i = 0; i < t->n; i++) {
    size_t k;
    json_t *c;

    json_array_foreach(t->r[i].cases, k, c) {
      const char *id = field(c, "id");
      bool seen = false;
      struct row *row;

      for (int p = 0; p < i && !seen; p++)
        seen = find_case(&t->r[p], id) != NULL;
      if (seen)
        continue;
      row = &t->rows[t->nrows++];
      row->id = id;
      if ((row->cell = calloc((size_t)t->n, sizeof *row->cell)) == NULL)
        return -1;
      for (int p = 0; p < t->n; p++) {
        row->cell[p] = p < i ? NULL : find_case(&t->r[p], id);
        if (row->claim == NULL && row->cell[p])
          row->claim = field(row->cell[p], "claim");
      }
      row->agree = agreement(t, row);
      t->count[row->agree]++;
    }
  }
  return 0;
}

static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');

  return slash ? slash + 1 : path;
}

static void summary_counts(const struct table *t, char *buf, size_t len)
{
  snprintf(buf, len, "%d cases agree; %d agree where they ran (skipped elsewhere: a function "
           "missing from that NCCL version, or a part not built there); %d disagree with a "
           "documented divergence, %d without.", t->count[AGREE], t->count[AGREE_WHERE_RUN],
           t->count[DIFFER_DOCUMENTED], t->count[DIFFER]);
}

/* Markdown. */

/* Table cell text: '|' would end the cell, newlines the row, and '<' may
 * open an HTML tag. */
static void md_text(FILE *out, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '|': fputs("\\|", out); break;
    case '\n': fputs("<br>", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '&': fputs("&amp;", out); break;
    default: fputc(*s, out);
    }
  }
}

static void md_cell(FILE *out, const json_t *c)
{
  const char *detail, *div;

  fputs(" | ", out);
  if (c == NULL) {
    fputs("—", out); /* not in this report */
    return;
  }
  md_text(out, field(c, "result"));
  if ((detail = field(c, "detail")) && *detail) {
    fputs(": ", out);
    md_text(out, detail);
  }
  if ((div = field(c, "divergence")) && *div) {
    fputs("<br>*divergence:* ", out);
    md_text(out, div);
  }
}

static const char *const md_agree[] = {
  [AGREE] = "yes", [AGREE_WHERE_RUN] = "yes where run (see the skips)",
  [DIFFER_DOCUMENTED] = "**no**: documented divergence", [DIFFER] = "**NO**",
};

static void write_md(const struct table *t, FILE *out)
{
  char counts[512];

  fputs("# Conformance: reports side by side\n\n", out);
  for (int i = 0; i < t->n; i++) {
    char ver[32] = "?";

    if (t->r[i].nccl_version)
      text_nccl_version(t->r[i].nccl_version, ver, sizeof ver);
    fprintf(out, "- `%s`: NCCL %s, from `", t->r[i].label, ver);
    md_text(out, base_name(t->r[i].path));
    fputs("`\n", out);
  }
  fputs("\n| case | claim", out);
  for (int i = 0; i < t->n; i++)
    fprintf(out, " | %s", t->r[i].label);
  fputs(" | agree |\n|---|---", out);
  for (int i = 0; i < t->n; i++)
    fputs("|---", out);
  fputs("|---|\n", out);
  for (size_t k = 0; k < t->nrows; k++) {
    const struct row *row = &t->rows[k];

    fputs("| ", out);
    md_text(out, row->id);
    fputs(" | ", out);
    md_text(out, row->claim ? row->claim : "");
    for (int i = 0; i < t->n; i++)
      md_cell(out, row->cell[i]);
    fprintf(out, " | %s |\n", md_agree[row->agree]);
  }
  summary_counts(t, counts, sizeof counts);
  fprintf(out, "\n%s\n", counts);
}

/* HTML: one file, inline CSS, no script, nothing fetched. */

static const char html_head[] =
  "<!DOCTYPE html>\n"
  "<html lang=\"en\">\n"
  "<head>\n"
  "<meta charset=\"utf-8\">\n"
  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
  "<title>Conformance: reports side by side</title>\n"
  "<style>\n"
  "body { font: 14px/1.4 system-ui, -apple-system, \"Segoe UI\", sans-serif; margin: 1.5em; color: #1f2328; }\n"
  "h1 { font-size: 1.5em; margin: 0 0 .5em; }\n"
  "code { font-size: .95em; }\n"
  "table { border-collapse: collapse; }\n"
  "th, td { border: 1px solid #d0d7de; padding: 3px 6px; text-align: left; vertical-align: top; }\n"
  "thead th { position: sticky; top: 0; background: #f6f8fa; }\n"
  "th small { display: block; font-weight: normal; color: #57606a; }\n"
  "td.id { white-space: nowrap; font-weight: 600; }\n"
  "td.claim { min-width: 18em; max-width: 32em; }\n"
  "td.v { white-space: nowrap; text-align: center; }\n"
  ".pass { background: #dafbe1; color: #116329; }\n"
  ".skip { background: #eaeef2; color: #57606a; }\n"
  ".fail { background: #ffebe9; color: #a40e26; font-weight: 600; }\n"
  ".none { color: #8c959f; }\n"
  "td.agree { white-space: nowrap; }\n"
  "tr.differ td.id, tr.differ td.agree { background: #ffcecb; color: #82071e; font-weight: 700; }\n"
  "tr.differ-documented td.id, tr.differ-documented td.agree { background: #fff1c2; color: #7d4e00; }\n"
  "tr.agree-where-run td.agree { color: #57606a; }\n"
  "tr.differ, tr.differ-documented { outline: 2px solid #cf222e; outline-offset: -1px; }\n"
  "tr.differ-documented { outline-color: #bf8700; }\n"
  "td.why { max-width: 40em; font-size: .93em; }\n"
  "td.why p { margin: 0 0 .3em; white-space: pre-line; }\n"
  "td.why b { font-weight: 600; }\n"
  "ul.reports { padding-left: 1.2em; }\n"
  "p.legend span { padding: 0 .4em; margin-right: .3em; }\n"
  "</style>\n"
  "</head>\n"
  "<body>\n"
  "<h1>Conformance: reports side by side</h1>\n";

static const char *const html_agree[][2] = { /* the row's class, the agree cell */
  [AGREE] = { "agree", "yes" },
  [AGREE_WHERE_RUN] = { "agree-where-run", "yes where run" },
  [DIFFER_DOCUMENTED] = { "differ-documented", "no: documented divergence" },
  [DIFFER] = { "differ", "NO" },
};

static void html_labels(FILE *out, const struct table *t, const bool *which)
{
  bool first = true;

  for (int i = 0; i < t->n; i++) {
    if (!which[i])
      continue;
    fputs(first ? "" : ", ", out);
    text_xml(out, t->r[i].label, false);
    first = false;
  }
}

/* Beside each row: every divergence and every skip or failure detail, each
 * once, with the columns that gave it. */
static void html_why(FILE *out, const struct table *t, const struct row *row, bool *which)
{
  static const char *const keys[] = { "divergence", "detail" };

  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < t->n; i++) {
      const json_t *c = row->cell[i];
      const char *text = c ? field(c, keys[k]) : NULL;
      const char *result = c ? field(c, "result") : NULL;
      bool done = false;

      if (text == NULL || *text == '\0' || (k == 1 && strcmp(result, "pass") == 0))
        continue;
      for (int p = 0; p < i && !done; p++) { /* said for an earlier column */
        const json_t *pc = row->cell[p];
        const char *pt = pc ? field(pc, keys[k]) : NULL;

        done = pt && strcmp(pt, text) == 0 && (k == 0 || strcmp(field(pc, "result"), result) == 0);
      }
      if (done)
        continue;
      for (int p = i; p < t->n; p++) {
        const json_t *pc = row->cell[p];
        const char *pt = pc ? field(pc, keys[k]) : NULL;

        which[p] = pt && strcmp(pt, text) == 0 &&
                   (k == 0 || strcmp(field(pc, "result"), result) == 0);
      }
      for (int p = 0; p < i; p++)
        which[p] = false;
      fprintf(out, "<p><b>%s</b> (", k == 0 ? "divergence" : result);
      html_labels(out, t, which);
      fputs("): ", out);
      text_xml(out, text, false);
      fputs("</p>", out);
    }
  }
}

/* which: room for a flag per column. */
static void write_html(const struct table *t, FILE *out, bool *which)
{
  char counts[512];

  fputs(html_head, out);
  fputs("<ul class=\"reports\">\n", out);
  for (int i = 0; i < t->n; i++) {
    char ver[32] = "?";

    if (t->r[i].nccl_version)
      text_nccl_version(t->r[i].nccl_version, ver, sizeof ver);
    fputs("<li><b>", out);
    text_xml(out, t->r[i].label, false);
    fputs("</b>: ", out);
    text_xml(out, t->r[i].backend, false);
    fprintf(out, ", NCCL %s, ", ver);
    text_xml(out, t->r[i].launch, false);
    fprintf(out, ", %d ranks, from <code>", t->r[i].nranks);
    text_xml(out, base_name(t->r[i].path), false);
    fputs("</code></li>\n", out);
  }
  summary_counts(t, counts, sizeof counts);
  fputs("</ul>\n<p class=\"summary\">", out);
  text_xml(out, counts, false);
  fputs("</p>\n<p class=\"legend\"><span class=\"pass\">pass</span><span class=\"skip\">skip"
        "</span><span class=\"fail\">fail</span><span class=\"none\">— not in that report"
        "</span> Rows where the reports disagree are outlined: red without an explanation, "
        "amber with a documented divergence. Beside each row, every divergence and every "
        "reason for a skip or a failure, with the columns that gave it.</p>\n", out);

  fputs("<table id=\"cases\">\n<thead>\n<tr><th>case</th><th>claim</th>", out);
  for (int i = 0; i < t->n; i++) {
    char ver[32] = "?";

    if (t->r[i].nccl_version)
      text_nccl_version(t->r[i].nccl_version, ver, sizeof ver);
    fputs("<th>", out);
    text_xml(out, t->r[i].label, false);
    fprintf(out, "<small>NCCL %s</small></th>", ver);
  }
  fputs("<th>agree</th><th>why</th></tr>\n</thead>\n<tbody>\n", out);
  for (size_t k = 0; k < t->nrows; k++) {
    const struct row *row = &t->rows[k];

    fprintf(out, "<tr class=\"%s\" id=\"", html_agree[row->agree][0]);
    text_xml(out, row->id, true);
    fputs("\"><td class=\"id\">", out);
    text_xml(out, row->id, false);
    fputs("</td><td class=\"claim\">", out);
    text_xml(out, row->claim ? row->claim : "", false);
    fputs("</td>", out);
    for (int i = 0; i < t->n; i++) {
      const json_t *c = row->cell[i];
      const char *detail = c ? field(c, "detail") : NULL;

      if (c == NULL) {
        fputs("<td class=\"v none\" title=\"not in this report\">—</td>", out);
        continue;
      }
      fprintf(out, "<td class=\"v %s\"", field(c, "result"));
      if (detail && *detail) {
        fputs(" title=\"", out);
        text_xml(out, detail, true);
        fputs("\"", out);
      }
      fprintf(out, ">%s%s</td>", field(c, "result"),
              field(c, "divergence") && *field(c, "divergence") ? "*" : "");
    }
    fprintf(out, "<td class=\"agree\">%s</td><td class=\"why\">", html_agree[row->agree][1]);
    html_why(out, t, row, which);
    fputs("</td></tr>\n", out);
  }
  fputs("</tbody>\n</table>\n<p>* the case reported a divergence from the documented "
        "behaviour (beside the row).</p>\n</body>\n</html>\n", out);
}

int report_table(char **files, int nfiles, FILE *out, const char *html)
{
  struct table t = { 0 };
  bool *which = calloc((size_t)nfiles, sizeof *which);
  int rc = 0;

  t.n = nfiles;
  if (which == NULL || (t.r = calloc((size_t)nfiles, sizeof *t.r)) == NULL) {
    fputs("n4c-conformance: out of memory\n", stderr);
    free(which);
    return -1;
  }
  for (int i = 0; i < nfiles && rc == 0; i++)
    rc = load(files[i], &t.r[i]);
  for (int i = 0; i < nfiles && rc == 0; i++)
    for (int k = 0; k < i && rc == 0; k++)
      if (strcmp(t.r[i].label, t.r[k].label) == 0) {
        fprintf(stderr, "n4c-conformance: %s: a second report of %s (backend/launch/ranks), "
                "after %s: the table has one column for each backend, launch mode and rank "
                "count\n", files[i], t.r[i].label, files[k]);
        rc = -1;
      }
  if (rc == 0 && make_rows(&t) != 0) {
    fputs("n4c-conformance: out of memory\n", stderr);
    rc = -1;
  }
  if (rc == 0 && html) {
    struct report_file rf;

    if (report_open(&rf, html) == NULL)
      rc = -1;
    else {
      write_html(&t, rf.f, which);
      rc = report_close(&rf, true);
    }
  }
  if (rc == 0)
    write_md(&t, out);
  for (size_t k = 0; k < t.nrows; k++)
    free(t.rows[k].cell);
  free(t.rows);
  for (int i = 0; i < nfiles; i++)
    json_decref(t.r[i].root);
  free(t.r);
  free(which);
  return rc;
}

#else /* !HAVE_JANSSON: main.c refuses --table before it gets here */

int report_table(char **files, int nfiles, FILE *out, const char *html)
{
  (void)files, (void)nfiles, (void)out, (void)html;
  fprintf(stderr, "n4c-conformance: --table: %s\n", report_no_jansson);
  return -1;
}

#endif
