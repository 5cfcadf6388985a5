/* text.c — UTF-8 repair and XML escaping for the reports. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text.h"

size_t text_utf8_len(const unsigned char *s)
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
    if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

char *text_utf8_clean(const char *str)
{
  const unsigned char *s = (const unsigned char *)str;
  size_t len = 0;
  char *out, *o;

  /* A bad byte (1) becomes 3 bytes: at most three times as long. */
  for (const unsigned char *p = s; *p;) {
    size_t n = text_utf8_len(p);

    len += n ? n : sizeof replacement - 1;
    p += n ? n : 1;
  }
  if ((out = o = malloc(len + 1)) == NULL)
    return NULL;
  while (*s) {
    size_t n = text_utf8_len(s);

    if (n) {
      memcpy(o, s, n);
      o += n;
      s += n;
    } else {
      memcpy(o, replacement, sizeof replacement - 1);
      o += sizeof replacement - 1;
      s++;
    }
  }
  *o = '\0';
  return out;
}

void text_xml(FILE *out, const char *str, bool attr)
{
  const unsigned char *s = (const unsigned char *)str;

  while (*s) {
    size_t n = text_utf8_len(s);

    switch (*s) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    case '\t': fputs(attr ? "&#9;" : "\t", out); break;
    case '\n': fputs(attr ? "&#10;" : "\n", out); break;
    case '\r': fputs("&#13;", out); break; /* a parser would drop a bare CR */
    default:
      if (n == 0 || *s < 0x20 ||
          (n == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)))
        fputs(replacement, out);
      else
        fwrite(s, 1, n, out);
    }
    s += n ? n : 1;
  }
}

void text_nccl_version(int code, char *buf, size_t len)
{
  if (code >= 10000)
    snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
  else
    snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}
