/* json.c — JSON string output and a small recursive-descent reader. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

/* Length of the valid UTF-8 sequence at s, 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
  size_t n;
  uint32_t cp;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4, cp = s[0] & 0x07;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

void json_put_string(FILE *out, const char *str)
{
  const unsigned char *s = (const unsigned char *)str;

  fputc('"', out);
  while (*s) {
    size_t n = utf8_len(s);

    switch (*s) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (n == 0)
        fputs("\\ufffd", out), n = 1;
      else if (*s < 0x20 || *s == 0x7f)
        fprintf(out, "\\u%04x", *s);
      else
        fwrite(s, 1, n, out);
    }
    s += n ? n : 1;
  }
  fputc('"', out);
}

/* The reader. */

#define MAX_DEPTH 32

struct parser {
  const char *p, *start;
  char *err;
  size_t errlen;
  bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (ps->failed)
    return;
  ps->failed = true;
  n = snprintf(ps->err, ps->errlen, "at byte %ld: ", (long)(ps->p - ps->start));
  if (n >= 0 && (size_t)n < ps->errlen) {
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
}

static void skip_ws(struct parser *ps)
{
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
    ps->p++;
}

static int hex4(const char *s)
{
  int v = 0;

  for (int i = 0; i < 4; i++) {
    int c = s[i], d;

    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return -1;
    v = v << 4 | d;
  }
  return v;
}

static size_t put_utf8(char *out, uint32_t cp)
{
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* At the opening quote; the decoded text is never longer than the source. */
static char *parse_string(struct parser *ps)
{
  const char *end;
  char *out, *o;

  ps->p++;
  for (end = ps->p; *end && *end != '"'; end++)
    if (*end == '\\' && end[1])
      end++;
  if (*end != '"') {
    fail(ps, "unterminated string");
    return NULL;
  }
  if ((out = o = malloc((size_t)(end - ps->p) + 1)) == NULL) {
    fail(ps, "out of memory");
    return NULL;
  }
  while (ps->p < end) {
    char c = *ps->p++;

    if ((unsigned char)c < 0x20) {
      fail(ps, "control character in a string");
      free(out);
      return NULL;
    }
    if (c != '\\') {
      *o++ = c;
      continue;
    }
    switch (c = *ps->p++) {
    case '"': case '\\': case '/': *o++ = c; break;
    case 'b': *o++ = '\b'; break;
    case 'f': *o++ = '\f'; break;
    case 'n': *o++ = '\n'; break;
    case 'r': *o++ = '\r'; break;
    case 't': *o++ = '\t'; break;
    case 'u': {
      int cp = end - ps->p >= 4 ? hex4(ps->p) : -1;

      if (cp < 0) {
        fail(ps, "bad \\u escape");
        free(out);
        return NULL;
      }
      ps->p += 4;
      /* A high surrogate followed by a low one is one code point. */
      if (cp >= 0xd800 && cp <= 0xdbff && end - ps->p >= 6 && ps->p[0] == '\\' &&
          ps->p[1] == 'u') {
        int lo = hex4(ps->p + 2);

        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          ps->p += 6;
        }
      }
      if (cp >= 0xd800 && cp <= 0xdfff)
        cp = 0xfffd; /* a lone surrogate */
      o += put_utf8(o, (uint32_t)cp);
      break;
    }
    default:
      fail(ps, "bad escape '\\%c'", c);
      free(out);
      return NULL;
    }
  }
  *o = '\0';
  ps->p = end + 1;
  return out;
}

static struct json *parse_value(struct parser *ps, int depth);

/* Arrays and objects: elements, separated by commas, up to `close`. */
static bool parse_elements(struct parser *ps, struct json *j, char close, int depth)
{
  struct json **tail = &j->child;

  ps->p++;
  skip_ws(ps);
  if (*ps->p == close) {
    ps->p++;
    return true;
  }
  for (;;) {
    char *key = NULL;
    struct json *v;

    skip_ws(ps);
    if (close == '}') {
      if (*ps->p != '"') {
        fail(ps, "expected a member name");
        return false;
      }
      if ((key = parse_string(ps)) == NULL)
        return false;
      skip_ws(ps);
      if (*ps->p++ != ':') {
        free(key);
        fail(ps, "expected ':'");
        return false;
      }
    }
    if ((v = parse_value(ps, depth + 1)) == NULL) {
      free(key);
      return false;
    }
    v->key = key;
    *tail = v;
    tail = &v->next;
    skip_ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      return true;
    }
    fail(ps, "expected ',' or '%c'", close);
    return false;
  }
}

static struct json *parse_value(struct parser *ps, int depth)
{
  struct json *j;
  bool ok = true;

  skip_ws(ps);
  if (depth > MAX_DEPTH) {
    fail(ps, "nested too deeply");
    return NULL;
  }
  if ((j = calloc(1, sizeof *j)) == NULL) {
    fail(ps, "out of memory");
    return NULL;
  }
  switch (*ps->p) {
  case '{': j->type = JSON_OBJECT; ok = parse_elements(ps, j, '}', depth); break;
  case '[': j->type = JSON_ARRAY; ok = parse_elements(ps, j, ']', depth); break;
  case '"':
    j->type = JSON_STRING;
    ok = (j->string = parse_string(ps)) != NULL;
    break;
  default:
    if (strncmp(ps->p, "null", 4) == 0) {
      j->type = JSON_NULL;
      ps->p += 4;
    } else if (strncmp(ps->p, "true", 4) == 0) {
      j->type = JSON_BOOL;
      j->number = 1;
      ps->p += 4;
    } else if (strncmp(ps->p, "false", 5) == 0) {
      j->type = JSON_BOOL;
      ps->p += 5;
    } else if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
      char *end;

      j->type = JSON_NUMBER;
      j->number = strtod(ps->p, &end);
      ps->p = end;
    } else {
      if (*ps->p)
        fail(ps, "unexpected character '%c'", *ps->p);
      else
        fail(ps, "unexpected end");
      ok = false;
    }
  }
  if (!ok) {
    json_free(j);
    return NULL;
  }
  return j;
}

struct json *json_parse(const char *text, char *err, size_t errlen)
{
  struct parser ps = { text, text, err, errlen, false };
  struct json *j = parse_value(&ps, 0);

  if (j) {
    skip_ws(&ps);
    if (*ps.p) {
      fail(&ps, "text after the value");
      json_free(j);
      j = NULL;
    }
  }
  return j;
}

void json_free(struct json *j)
{
  while (j) {
    struct json *next = j->next;

    json_free(j->child);
    free(j->string);
    free(j->key);
    free(j);
    j = next;
  }
}

const struct json *json_get(const struct json *obj, const char *key)
{
  if (obj == NULL || obj->type != JSON_OBJECT)
    return NULL;
  for (const struct json *m = obj->child; m; m = m->next)
    if (strcmp(m->key, key) == 0)
      return m;
  return NULL;
}

const char *json_get_string(const struct json *obj, const char *key)
{
  const struct json *m = json_get(obj, key);

  return m && m->type == JSON_STRING ? m->string : NULL;
}
