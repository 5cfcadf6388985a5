/*
 * sim/trace_merge.c — ncclsim-trace-merge: one timeline from the files
 * that the processes of a job wrote (NCCLSIM_TRACE with ranks as
 * processes: each process writes its own ranks, FILE.<pid>.json).
 *
 *   ncclsim-trace-merge OUT IN...
 *
 * Times need no shifting: every process of a job counts from the same
 * time 0 (the job's first communicator). A communicator's tracks go under
 * one process track, found by its name ("communicator <key> (<n> ranks)"),
 * and the rank/stream tracks of each file get track numbers of their own.
 * Flow arrows join events of one file only: a send in one process and its
 * receive in another have none.
 *
 * Exit status: 0, 1 for an input it cannot read or parse (named on stderr),
 * 2 for bad usage.
 */
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static json_t *named; /* merged pids whose process_name is out already */

/* Whether e is the metadata event that names a process track. */
static bool names_process(json_t *e) {
  const char *ph = json_string_value(json_object_get(e, "ph"));
  const char *what = json_string_value(json_object_get(e, "name"));
  return ph && what && !strcmp(ph, "M") && !strcmp(what, "process_name");
}

/* The merged file's process track of a communicator name. */
static json_int_t pid_of(json_t *names, const char *name) {
  json_t *v = json_object_get(names, name);
  if (v) return json_integer_value(v);
  json_int_t pid = (json_int_t)json_object_size(names);
  json_object_set_new(names, name, json_integer(pid));
  return pid;
}

static int merge_file(const char *path, int fileno, json_t *out, json_t *names, json_t *next_tid) {
  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  json_t *events = root ? json_object_get(root, "traceEvents") : NULL;
  if (!json_is_array(events)) {
    fprintf(stderr, "ncclsim-trace-merge: %s: %s\n", path,
            root ? "no traceEvents array" : err.text);
    json_decref(root);
    return 1;
  }
  /* This file's process tracks: old pid -> communicator name. */
  json_t *pid_names = json_object(), *tids = json_object();
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (names_process(e)) {
      char key[32];
      snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(e, "pid")));
      json_object_set(pid_names, key, json_object_get(json_object_get(e, "args"), "name"));
    }
  }
  json_array_foreach(events, i, e) {
    json_t *copy = json_deep_copy(e);
    char key[64];
    snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(e, "pid")));
    const char *name = json_string_value(json_object_get(pid_names, key));
    json_int_t pid = pid_of(names, name ? name : "(unnamed)");
    bool process_name = names_process(e);
    if (process_name) {
      /* Once per communicator, whichever file names it first. */
      char seen[32];
      snprintf(seen, sizeof seen, "%lld", (long long)pid);
      if (json_object_get(named, seen)) {
        json_decref(copy);
        continue;
      }
      json_object_set_new(named, seen, json_true());
    }
    json_object_set_new(copy, "pid", json_integer(pid));
    json_t *tid = json_object_get(e, "tid");
    if (json_is_integer(tid) && !process_name) {
      char tkey[96];
      snprintf(tkey, sizeof tkey, "%lld/%lld", (long long)json_integer_value(json_object_get(e, "pid")),
               (long long)json_integer_value(tid));
      json_t *t = json_object_get(tids, tkey);
      if (!t) {
        char pkey[32];
        snprintf(pkey, sizeof pkey, "%lld", (long long)pid);
        json_t *last = json_object_get(next_tid, pkey);
        json_int_t n = last ? json_integer_value(last) + 1 : 0;
        json_object_set_new(next_tid, pkey, json_integer(n));
        json_object_set_new(tids, tkey, t = json_integer(n));
      }
      json_object_set(copy, "tid", t);
    }
    json_t *id = json_object_get(e, "id");
    if (id) { /* flow ids are unique within a file: make them unique here */
      char fid[64];
      snprintf(fid, sizeof fid, "%d:%s%lld", fileno, json_is_string(id) ? json_string_value(id) : "",
               json_is_integer(id) ? (long long)json_integer_value(id) : 0LL);
      json_object_set_new(copy, "id", json_string(fid));
    }
    json_array_append_new(out, copy);
  }
  json_decref(pid_names);
  json_decref(tids);
  json_decref(root);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fprintf(argc < 3 ? stderr : stdout, "usage: ncclsim-trace-merge OUT IN...\n");
    return argc < 3 ? 2 : 0;
  }
  json_t *events = json_array(), *names = json_object(), *next_tid = json_object();
  named = json_object();
  int rc = 0;
  for (int i = 2; i < argc && rc == 0; i++) rc = merge_file(argv[i], i - 2, events, names, next_tid);
  if (rc == 0) {
    json_t *root = json_pack("{s:s, s:o}", "displayTimeUnit", "ns", "traceEvents", events);
    events = NULL;
    if (json_dump_file(root, argv[1], JSON_COMPACT) != 0) {
      fprintf(stderr, "ncclsim-trace-merge: cannot write %s\n", argv[1]);
      rc = 1;
    }
    json_decref(root);
  }
  json_decref(events);
  json_decref(names);
  json_decref(next_tid);
  json_decref(named);
  return rc;
}
