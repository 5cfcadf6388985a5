/*
 * json.h — just enough JSON for the suite's own reports: a string writer
 * and a reader that builds a tree. Not a general library: numbers are
 * doubles and nesting is limited.
 */
#ifndef N4C_CONFORMANCE_JSON_H_
#define N4C_CONFORMANCE_JSON_H_

#include <stddef.h>
#include <stdio.h>

/* `s` as a quoted JSON string; bytes that are not UTF-8 become U+FFFD. */
void json_put_string(FILE *out, const char *s);

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
  enum json_type type;
  double number;      /* JSON_NUMBER; JSON_BOOL: 0 or 1 */
  char *string;       /* JSON_STRING, UTF-8 */
  char *key;          /* a member of an object: its name */
  struct json *child; /* JSON_ARRAY, JSON_OBJECT: the first element */
  struct json *next;  /* the next element of the parent */
};

/* NULL on error, with a message naming the byte offset in `err`. */
struct json *json_parse(const char *text, char *err, size_t errlen);
void json_free(struct json *j);
/* The member `key` of an object, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *json_get_string(const struct json *obj, const char *key);

#endif /* N4C_CONFORMANCE_JSON_H_ */
