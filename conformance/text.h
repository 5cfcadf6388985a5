/*
 * text.h — text for the reports: a case's detail is whatever a rank
 * printed, cut to a fixed size (perhaps in the middle of a UTF-8
 * sequence), so every report writer first makes it valid UTF-8; the XML
 * and HTML writers then escape it.
 */
#ifndef N4C_CONFORMANCE_TEXT_H_
#define N4C_CONFORMANCE_TEXT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1 to 4), 0 if there is none
 * (a stray continuation byte, an overlong form, a surrogate, a sequence cut
 * short by the end of the string). */
size_t text_utf8_len(const unsigned char *s);

/* A copy of s in which every byte that does not start a valid UTF-8
 * sequence is U+FFFD; NULL when out of memory. Free it. */
char *text_utf8_clean(const char *s);

/* s as XML (and HTML) character data, or as an attribute value when `attr`:
 * & < > " ' become references; in an attribute, so do tab, newline and
 * carriage return, which a parser would otherwise turn into spaces.
 * Characters XML 1.0 does not allow (other C0 controls, U+FFFE, U+FFFF)
 * and invalid UTF-8 become U+FFFD. */
void text_xml(FILE *out, const char *s, bool attr);

/* NCCL_VERSION_CODE as "2.28.3" (X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z
 * after). */
void text_nccl_version(int code, char *buf, size_t len);

#endif /* N4C_CONFORMANCE_TEXT_H_ */
