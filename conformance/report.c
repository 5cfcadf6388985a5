/*
 * report.c — the JSON report of a run, and the Markdown table that sets
 * several reports side by side (n4c-conformance --table).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "runner.h"

const char *run_backend(void)
{
#ifdef NCCLSIM
  return "ncclsim";
#else
  return "nccl";
#endif
}

/* Written beside the target and renamed, so that a reader never sees half
 * a report (the MPI watchdog writes it just before aborting the run). */
int report_json_write(const struct run *run, const char *path)
{
  size_t len = strlen(path) + 5;
  char *tmp = malloc(len);
  FILE *f;

  if (tmp == NULL)
    return -1;
  snprintf(tmp, len, "%s.tmp", path);
  if ((f = fopen(tmp, "w")) == NULL) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", tmp, strerror(errno));
    free(tmp);
    return -1;
  }
  fputs("{\n  \"backend\": ", f);
  json_put_string(f, run_backend());
  fprintf(f, ",\n  \"nccl_version\": %d,\n  \"nranks\": %d,\n  \"launch\": ",
          run->nccl_version, run->nranks);
  json_put_string(f, run->launch);
  fputs(",\n  \"cases\": [", f);
  for (size_t i = 0; i < run->ndone; i++) {
    const struct case_result *res = &run->results[i];

    fputs(i ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
    json_put_string(f, run->cases[i]->id);
    fputs(", \"claim\": ", f);
    json_put_string(f, run->cases[i]->claim);
    fputs(", \"result\": ", f);
    json_put_string(f, verdict_name(res->verdict));
    fputs(", \"detail\": ", f);
    json_put_string(f, res->detail);
    if (res->divergence[0]) {
      fputs(", \"divergence\": ", f);
      json_put_string(f, res->divergence);
    }
    fprintf(f, ", \"seconds\": %.3f}", res->seconds);
  }
  fputs("\n  ]\n}\n", f);
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    fprintf(stderr, "n4c-conformance: writing %s: %s\n", path, strerror(errno));
    remove(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

/* The table. */

static char *slurp(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0, n;

  if (f == NULL)
    return NULL;
  do {
    if (cap - len < 4096) {
      char *b = realloc(buf, cap = cap * 2 + 8192);

      if (b == NULL) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = b;
    }
    n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
  } while (n > 0);
  buf[len] = '\0';
  if (ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

struct report {
  struct json *root;
  const struct json *cases;
  char label[96];
};

static const struct json *find_case(const struct report *r, const char *id)
{
  for (const struct json *c = r->cases->child; c; c = c->next) {
    const char *cid = json_get_string(c, "id");

    if (cid && strcmp(cid, id) == 0)
      return c;
  }
  return NULL;
}

static void version_text(int code, char *buf, size_t len)
{
  /* NCCL_VERSION: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after. */
  if (code >= 10000)
    snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
  else
    snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

static int load(const char *path, struct report *r)
{
  char err[160];
  char *text = slurp(path);
  const struct json *nr;

  if (text == NULL) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", path, strerror(errno));
    return -1;
  }
  r->root = json_parse(text, err, sizeof err);
  free(text);
  if (r->root == NULL) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", path, err);
    return -1;
  }
  r->cases = json_get(r->root, "cases");
  nr = json_get(r->root, "nranks");
  if (r->cases == NULL || r->cases->type != JSON_ARRAY || nr == NULL ||
      nr->type != JSON_NUMBER || !json_get_string(r->root, "backend")) {
    fprintf(stderr, "n4c-conformance: %s: not a conformance report "
            "(needs backend, nranks and a cases array)\n", path);
    return -1;
  }
  for (const struct json *c = r->cases->child; c; c = c->next)
    if (!json_get_string(c, "id") || !json_get_string(c, "result")) {
      fprintf(stderr, "n4c-conformance: %s: a case without id or result\n", path);
      return -1;
    }
  snprintf(r->label, sizeof r->label, "%s/%s/%d", json_get_string(r->root, "backend"),
           json_get_string(r->root, "launch") ? json_get_string(r->root, "launch") : "threads",
           (int)nr->number);
  return 0;
}

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

static void md_cell(FILE *out, const struct json *c)
{
  const char *detail, *div;

  fputs(" | ", out);
  if (c == NULL) {
    fputs("—", out); /* not in this report */
    return;
  }
  md_text(out, json_get_string(c, "result"));
  if ((detail = json_get_string(c, "detail")) && *detail) {
    fputs(": ", out);
    md_text(out, detail);
  }
  if ((div = json_get_string(c, "divergence")) && *div) {
    fputs("<br>*divergence:* ", out);
    md_text(out, div);
  }
}

enum agreement { AGREE, AGREE_WHERE_RUN, DIFFER_DOCUMENTED, DIFFER };

/* A skip that says why the claim could not be checked on that backend: a
 * function missing from the linked NCCL version, or a part nccl4c was built
 * without there. It is not a disagreement; the row says so. */
static bool explained_skip(const struct json *c)
{
  const char *detail = json_get_string(c, "detail");

  return strcmp(json_get_string(c, "result"), "skip") == 0 && detail &&
         (strncmp(detail, "not supported by NCCL", 21) == 0 || strncmp(detail, "nccl4c was built without", 24) == 0);
}

/* One row: the claim, each report's cell, and whether they agree. */
static enum agreement md_row(FILE *out, const struct report *r, int n, const char *id)
{
  const char *first = NULL, *claim = NULL;
  bool differ = false, documented = false, gaps = false;

  for (int i = 0; i < n && !claim; i++)
    claim = json_get_string(find_case(&r[i], id), "claim");
  fputs("| ", out);
  md_text(out, id);
  fputs(" | ", out);
  md_text(out, claim ? claim : "");
  for (int i = 0; i < n; i++) {
    const struct json *c = find_case(&r[i], id);
    const char *div;

    md_cell(out, c);
    if (c == NULL)
      continue;
    if ((div = json_get_string(c, "divergence")) && *div)
      documented = true;
    if (explained_skip(c)) {
      gaps = true;
      continue;
    }
    if (first && strcmp(first, json_get_string(c, "result")) != 0)
      differ = true;
    first = first ? first : json_get_string(c, "result");
  }
  fprintf(out, " | %s |\n", differ ? (documented ? "**no**: documented divergence" : "**NO**")
                            : gaps ? "yes where run (see the skips)" : "yes");
  return differ ? (documented ? DIFFER_DOCUMENTED : DIFFER) : gaps ? AGREE_WHERE_RUN : AGREE;
}

int report_table(char **files, int nfiles, FILE *out)
{
  struct report *r = calloc((size_t)nfiles, sizeof *r);
  int rc = 0, count[DIFFER + 1] = { 0 };

  if (r == NULL)
    return -1;
  for (int i = 0; i < nfiles && rc == 0; i++)
    rc = load(files[i], &r[i]);
  if (rc != 0)
    goto out;

  fputs("# Conformance: reports side by side\n\n", out);
  for (int i = 0; i < nfiles; i++) {
    const struct json *v = json_get(r[i].root, "nccl_version");
    char ver[32] = "?";

    if (v && v->type == JSON_NUMBER)
      version_text((int)v->number, ver, sizeof ver);
    const char *base = strrchr(files[i], '/');

    fprintf(out, "- `%s`: NCCL %s, from `", r[i].label, ver);
    md_text(out, base ? base + 1 : files[i]);
    fputs("`\n", out);
  }
  fputs("\n| case | claim", out);
  for (int i = 0; i < nfiles; i++)
    fprintf(out, " | %s", r[i].label);
  fputs(" | agree |\n|---|---", out);
  for (int i = 0; i < nfiles; i++)
    fputs("|---", out);
  fputs("|---|\n", out);

  /* Rows in the order of first appearance over the reports. */
  for (int i = 0; i < nfiles; i++) {
    for (const struct json *c = r[i].cases->child; c; c = c->next) {
      const char *id = json_get_string(c, "id");
      bool seen = false;

      for (int k = 0; k < i && !seen; k++)
        seen = find_case(&r[k], id) != NULL;
      for (const struct json *p = r[i].cases->child; p != c && !seen; p = p->next)
        seen = strcmp(json_get_string(p, "id"), id) == 0;
      if (seen)
        continue;
      count[md_row(out, r, nfiles, id)]++;
    }
  }
  fprintf(out, "\n%d cases agree; %d agree where they ran (skipped elsewhere: a function missing from "
          "that NCCL version, or a part not built there); %d disagree with a documented divergence, "
          "%d without.\n", count[AGREE], count[AGREE_WHERE_RUN], count[DIFFER_DOCUMENTED], count[DIFFER]);
out:
  for (int i = 0; i < nfiles; i++)
    json_free(r[i].root);
  free(r);
  return rc;
}
