/*
 * table.c — n4c-conformance --table: JSON reports (read with jansson) set
 * side by side, one column per report and one row per case, as Markdown.
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

/* Reading the reports. */

static const char *member(const json_t *obj, const char *key)
{
  return json_string_value(json_object_get(obj, key)); /* NULL if absent */
}

static int load(const char *path, struct report *r)
{
  json_error_t err;
  json_t *nr, *v;
  size_t i;

  r->path = path;
  r->root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (r->root == NULL) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", path, err.text);
    return -1;
  }
  r->cases = json_object_get(r->root, "cases");
  nr = json_object_get(r->root, "nranks");
  if (!json_is_array(r->cases) || !json_is_integer(nr) || !member(r->root, "backend")) {
    fprintf(stderr, "n4c-conformance: %s: not a conformance report "
            "(needs backend, nranks and a cases array)\n", path);
    return -1;
  }
  json_array_foreach(r->cases, i, v)
    if (!member(v, "id") || !member(v, "result")) {
      fprintf(stderr, "n4c-conformance: %s: a case without id or result\n", path);
      return -1;
    }
  r->backend = member(r->root, "backend");
  r->launch = member(r->root, "launch") ? member(r->root, "launch") : "threads";
  r->nranks = (int)json_integer_value(nr);
  if (json_is_integer(v = json_object_get(r->root, "nccl_version")))
    r->nccl_version = (int)json_integer_value(v);
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

int report_table(char **files, int nfiles, FILE *out)
{
  struct table t = { 0 };
  int rc = 0;

  t.n = nfiles;
  if ((t.r = calloc((size_t)nfiles, sizeof *t.r)) == NULL) {
    fputs("n4c-conformance: out of memory\n", stderr);
    return -1;
  }
  for (int i = 0; i < nfiles && rc == 0; i++)
    rc = load(files[i], &t.r[i]);
  if (rc == 0 && make_rows(&t) != 0) {
    fputs("n4c-conformance: out of memory\n", stderr);
    rc = -1;
  }
  if (rc == 0)
    write_md(&t, out);
  for (size_t k = 0; k < t.nrows; k++)
    free(t.rows[k].cell);
  free(t.rows);
  for (int i = 0; i < nfiles; i++)
    json_decref(t.r[i].root);
  free(t.r);
  return rc;
}

#else /* !HAVE_JANSSON: main.c refuses --table before it gets here */

int report_table(char **files, int nfiles, FILE *out)
{
  (void)files, (void)nfiles, (void)out;
  fprintf(stderr, "n4c-conformance: --table: %s\n", report_no_jansson);
  return -1;
}

#endif
