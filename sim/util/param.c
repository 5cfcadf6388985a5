/*
 * sim/util/param.c — every NCCLSIM_* tunable, read once, in one place.
 *
 * A parameter's text comes from ncclsimParamSet() if set, else from the
 * environment, else from its default; the parsed value is cached until the
 * next ncclsimParamSet() (NCCL_PARAM-style).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sim.h"
#include "nccl_device/core.h" /* ncclGinType_t */

typedef struct {
  const char *env; /* without the NCCLSIM_ prefix */
  const char *dflt;
  const char *doc;
} param_def;

static const param_def defs[SIM_P_COUNT] = {
#define SIM_PARAM_DEF(id, env, dflt, doc) [SIM_P_##id] = {env, dflt, doc},
    SIM_PARAMS(SIM_PARAM_DEF)
#undef SIM_PARAM_DEF
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *override[SIM_P_COUNT]; /* from ncclsimParamSet */
/* Every override text ever set stays reachable here: a caller of
 * sim_param_text may still hold an old one. They are few and tiny. */
typedef struct kept_text {
  struct kept_text *next;
  char text[];
} kept_text;
static kept_text *kept;
static _Atomic int cached[SIM_P_COUNT];
/* Atomic: ncclsimParamSet makes a later load() rewrite them while other
 * threads read the previous value without the lock. */
static _Atomic double values[SIM_P_COUNT];
static const char *_Atomic texts[SIM_P_COUNT];

/* NCCLSIM_DEBUG: a level name (anything else: none); NCCLSIM_DEBUG_SUBSYS:
 * a comma-separated mask (unknown names ignored, empty: all). */
static double log_level_value(const char *text) {
  if (!strcasecmp(text, "WARN")) return SIM_LOG_WARN;
  if (!strcasecmp(text, "INFO")) return SIM_LOG_INFO;
  if (!strcasecmp(text, "TRACE")) return SIM_LOG_TRACE;
  return SIM_LOG_NONE;
}

static double log_subsys_value(const char *text) {
  static const struct { const char *name; unsigned bit; } names[] = {
      {"INIT", SIM_INIT}, {"ALLOC", SIM_ALLOC}, {"STREAM", SIM_STREAM}, {"P2P", SIM_P2P},
      {"COLL", SIM_COLL}, {"RMA", SIM_RMA},     {"DEV", SIM_DEV},       {"KERNEL", SIM_KERNEL},
      {"ALL", SIM_ALL}};
  unsigned mask = 0;
  if (!*text) return (unsigned)SIM_ALL;
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, ",");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strlen(names[i].name) == n && !strncasecmp(p, names[i].name, n)) mask |= names[i].bit;
    p += n;
    if (*p) p++;
  }
  return mask;
}

/* GIN type names map to their ncclGinType_t value; -1 if unknown. */
static int gin_value(const char *s) {
  static const struct { const char *name; int v; } names[] = {
      {"none", NCCL_GIN_TYPE_NONE}, {"proxy", NCCL_GIN_TYPE_PROXY},
      {"gdaki", NCCL_GIN_TYPE_GDAKI}, {"gpi", NCCL_GIN_TYPE_GPI}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(s, names[i].name) == 0) return names[i].v;
  char *end;
  long v = strtol(s, &end, 10);
  if (*s && !*end && (v == 0 || (v >= 2 && v <= 4))) return (int)v;
  return -1;
}

static bool is_gin(sim_param_id id) { return id == SIM_P_GIN_TYPE || id == SIM_P_RAILED_GIN_TYPE; }

/* NCCLSIM_FAULT: "none" is 0; "R:K" (K >= 1) is R * 2^32 + K. */
static bool parse_fault(const char *text, double *out) {
  unsigned long r, k;
  char tail;
  if (strcasecmp(text, "none") == 0) {
    *out = 0;
    return true;
  }
  if (sscanf(text, "%lu:%lu%c", &r, &k, &tail) != 2 || k < 1 || r > 0xffffff || k > 0xffffffffu) return false;
  *out = (double)r * 4294967296.0 + (double)k;
  return true;
}

/* Parses text for id; false if malformed. */
static bool parse(sim_param_id id, const char *text, double *out) {
  if (id == SIM_P_FAULT) return parse_fault(text, out);
  /* The logging parameters accept any text (util/log.c decides). */
  if (id == SIM_P_DEBUG) {
    *out = log_level_value(text);
    return true;
  }
  if (id == SIM_P_DEBUG_SUBSYS) {
    *out = log_subsys_value(text);
    return true;
  }
  /* File, host and interface names (core/trace.c and sim/net read the text). */
  if (id == SIM_P_TRACE || id == SIM_P_TRACE_DUMP || id == SIM_P_HOST_ID || id == SIM_P_SOCKET_IFNAME) {
    *out = 0;
    return true;
  }
  /* auto, 1 or 0 (util/shm.c reads the text). */
  if (id == SIM_P_PROCESSES || id == SIM_P_NET) {
    *out = !strcmp(text, "1");
    return !strcmp(text, "auto") || !strcmp(text, "0") || !strcmp(text, "1");
  }
  /* auto or a count. */
  if (id == SIM_P_SMALL_RANKS && !strcmp(text, "auto")) {
    *out = -1;
    return true;
  }
  if (is_gin(id)) {
    int v = gin_value(text);
    if (v < 0) return false;
    *out = v;
    return true;
  }
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno || !isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

/* Every log call reads SIM_P_DEBUG and SIM_P_DEBUG_SUBSYS, and may come
 * here to load them: nothing done under the lock may log (it would take the
 * lock again), so an invalid value is reported with a plain fprintf. */
static void load(sim_param_id id) {
  sim_mutex_lock(&lock);
  if (!atomic_load_explicit(&cached[id], memory_order_acquire)) {
    char env[64];
    snprintf(env, sizeof env, "NCCLSIM_%s", defs[id].env);
    const char *text = override[id] ? override[id] : getenv(env);
    double v;
    if (text && !parse(id, text, &v)) {
      fprintf(stderr, "NCCLSIM WARN %s=\"%s\" is not valid (%s); using the default %s\n", env,
              text, defs[id].doc, defs[id].dflt);
      text = NULL;
    }
    if (!text) {
      text = defs[id].dflt;
      parse(id, text, &v);
    }
    atomic_store_explicit(&texts[id], text, memory_order_relaxed);
    atomic_store_explicit(&values[id], v, memory_order_relaxed);
    atomic_store_explicit(&cached[id], 1, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
}

double sim_param(sim_param_id id) {
  if (!atomic_load_explicit(&cached[id], memory_order_acquire)) load(id);
  return atomic_load_explicit(&values[id], memory_order_relaxed);
}

int64_t sim_param_int(sim_param_id id) { return (int64_t)sim_param(id); }

const char *sim_param_text(sim_param_id id) {
  if (!atomic_load_explicit(&cached[id], memory_order_acquire)) load(id);
  return atomic_load_explicit(&texts[id], memory_order_relaxed);
}

uint64_t sim_timeout_ns(void) { return (uint64_t)(sim_param(SIM_P_TIMEOUT) * 1e9); }

static int find(const char *name) {
  if (!name) return -1;
  if (strncmp(name, "NCCLSIM_", 8) == 0) name += 8;
  for (int i = 0; i < SIM_P_COUNT; i++)
    if (strcmp(defs[i].env, name) == 0) return i;
  return -1;
}

SIM_EXPORT ncclResult_t ncclsimParamSet(const char *name, const char *value) {
  int id = find(name);
  if (id < 0) {
    SIM_WARN(SIM_INIT, "ncclsimParamSet: no parameter named \"%s\"", name ? name : "(null)");
    return ncclInvalidArgument;
  }
  double v;
  if (value && !parse((sim_param_id)id, value, &v)) {
    SIM_WARN(SIM_INIT, "ncclsimParamSet: \"%s\" is not a valid value for NCCLSIM_%s (%s)", value,
             defs[id].env, defs[id].doc);
    return ncclInvalidArgument;
  }
  kept_text *k = NULL;
  if (value) {
    size_t n = strlen(value) + 1;
    if (!(k = sim_malloc(sizeof *k + n))) return ncclSystemError;
    memcpy(k->text, value, n);
  }
  sim_mutex_lock(&lock);
  if (k) {
    k->next = kept;
    kept = k;
  }
  override[id] = k ? k->text : NULL;
  atomic_store_explicit(&cached[id], 0, memory_order_release);
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

SIM_EXPORT const char *ncclsimParamGet(const char *name) {
  int id = find(name);
  return id < 0 ? NULL : sim_param_text((sim_param_id)id);
}

SIM_EXPORT void ncclsimParamDump(void *out) {
  FILE *f = out ? (FILE *)out : stdout;
  for (int i = 0; i < SIM_P_COUNT; i++)
    fprintf(f, "NCCLSIM_%s=%s\t(default %s) %s\n", defs[i].env, sim_param_text((sim_param_id)i),
            defs[i].dflt, defs[i].doc);
}
