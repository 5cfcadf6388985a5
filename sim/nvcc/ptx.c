/*
 * sim/nvcc/ptx.c — inline PTX, carried out on the CPU.
 *
 * NCCL programs write a few PTX instructions inline: reductions and
 * atomics on global memory (red, atom), loads and stores with a memory
 * order (ld/st .volatile, .relaxed, .acquire, .release), fences (fence,
 * membar). Each becomes a call of ncclsim's device headers
 * (ncclsim_device/ptx.h) with the same meaning; a few more that device
 * code reads state with are kept too (mov from %laneid, %clock64, ...,
 * activemask, nanosleep, bar.sync 0, trap). Any other instruction is
 * refused, named; multimem instructions among them (ncclsim has no
 * multicast memory), and predicated instructions, .reg declarations and
 * 32-bit shared-memory addresses, which have no meaning here.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvcc.h"

typedef struct insn {
  char op[32];
  char mods[16][24]; /* the dot-suffixes, in order, without the dots */
  int nmods;
  char *args[8];     /* operands as written */
  int nargs;
} insn;

static bool has(const insn *in, const char *m) {
  for (int i = 0; i < in->nmods; i++)
    if (!strcmp(in->mods[i], m)) return true;
  return false;
}

static const char *ctype_of(const char *t) {
  static const struct {
    const char *ptx, *c;
  } types[] = {{"u8", "uint8_t"},   {"s8", "int8_t"},    {"b8", "uint8_t"},   {"u16", "uint16_t"},
               {"s16", "int16_t"},  {"b16", "uint16_t"}, {"u32", "uint32_t"}, {"s32", "int32_t"},
               {"b32", "uint32_t"}, {"u64", "uint64_t"}, {"s64", "int64_t"},  {"b64", "uint64_t"},
               {"f32", "float"},    {"f64", "double"}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (!strcmp(t, types[i].ptx)) return types[i].c;
  return NULL;
}

/* The instruction's type: its last modifier that names one. */
static const char *type_of(const insn *in) {
  for (int i = in->nmods - 1; i >= 0; i--) {
    const char *c = ctype_of(in->mods[i]);
    if (c) return c;
  }
  return NULL;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
  return s;
}

/* Splits "op.m1.m2 a, b, c" (no ';'); false if malformed. */
static bool split(char *text, insn *in) {
  memset(in, 0, sizeof *in);
  char *p = trim(text);
  size_t n = strcspn(p, " \t\n");
  char head[32 + 16 * 24];
  if (n >= sizeof head) return false;
  memcpy(head, p, n);
  head[n] = 0;
  char *rest = trim(p + n);
  char *dot = strchr(head, '.');
  if (dot) *dot = 0;
  if (strlen(head) >= sizeof in->op) return false;
  memcpy(in->op, head, strlen(head) + 1);
  while (dot) {
    char *m = dot + 1;
    dot = strchr(m, '.');
    if (dot) *dot = 0;
    if (in->nmods == 16 || strlen(m) >= sizeof in->mods[0]) return false;
    memcpy(in->mods[in->nmods++], m, strlen(m) + 1);
  }
  /* Operands: commas at depth 0 ({...} and [...] are one operand each). */
  int depth = 0;
  char *start = rest;
  for (char *q = rest;; q++) {
    if (*q == '{' || *q == '[') depth++;
    else if (*q == '}' || *q == ']') depth--;
    if ((*q == ',' && depth == 0) || !*q) {
      bool end = !*q;
      *q = 0;
      char *a = trim(start);
      if (*a) {
        if (in->nargs == 8) return false;
        in->args[in->nargs++] = a;
      }
      if (end) break;
      start = q + 1;
    }
  }
  return true;
}

typedef struct gen {
  sbuf out;
  const asm_operand *ops;
  size_t nops, nout;
  char *why;
} gen;

static bool fail(gen *g, const char *fmt, const char *what) {
  if (!g->why) g->why = xasprintf(fmt, what);
  return false;
}

/* %N -> its operand, or NULL. */
static const asm_operand *operand(gen *g, const char *a) {
  if (a[0] != '%' || !isdigit((unsigned char)a[1])) return NULL;
  char *end;
  long n = strtol(a + 1, &end, 10);
  if (*end || n < 0 || (size_t)n >= g->nops) return NULL;
  return &g->ops[n];
}

/* A source operand as a value of C type t. */
static bool value(gen *g, const char *a, const char *t, sbuf *v) {
  const asm_operand *o = operand(g, a);
  if (o) {
    sb_printf(v, "::__ncclsim_ptx::get<%s>(%s)", t, o->expr);
    return true;
  }
  /* PTX's floating immediates, by their bits: 0f and 8 hex digits (f32),
   * 0d and 16 (f64). */
  if (a[0] == '0' && a[1] && strchr("fFdD", a[1])) {
    bool f32 = a[1] == 'f' || a[1] == 'F';
    size_t n = strspn(a + 2, "0123456789abcdefABCDEF");
    if (n != (f32 ? 8u : 16u) || a[2 + n])
      return fail(g, "operand '%s' (a floating immediate is 0f and 8 hex digits, or 0d and 16)", a);
    sb_printf(v, "::__ncclsim_ptx::get<%s>(::__ncclsim_ptx::get<%s>((%s)0x%s%s))", t, f32 ? "float" : "double",
              f32 ? "uint32_t" : "uint64_t", a + 2, f32 ? "u" : "ull");
    return true;
  }
  if (isdigit((unsigned char)a[0]) || a[0] == '-') {
    sb_printf(v, "(%s)(%s)", t, a);
    return true;
  }
  return fail(g, "operand '%s' (an operand must be %%N or a number)", a);
}

/* [%N], [%N+k], [%N-k] -> a char * expression; 32-bit addresses refused. */
static bool address(gen *g, const char *a, sbuf *v) {
  size_t n = strlen(a);
  if (n < 3 || a[0] != '[' || a[n - 1] != ']') return fail(g, "address '%s' (expected [%%N] or [%%N+k])", a);
  char inner[128];
  snprintf(inner, sizeof inner, "%.*s", (int)(n - 2), a + 1);
  char *plus = strpbrk(inner + 1, "+-"), off[64] = "0";
  if (plus) {
    snprintf(off, sizeof off, "%s", plus);
    *plus = 0;
  }
  const asm_operand *o = operand(g, trim(inner));
  if (!o) return fail(g, "address '%s' (expected [%%N] or [%%N+k])", a);
  const char *c = o->constraint;
  while (*c == '=' || *c == '+') c++;
  if (*c == 'r' || *c == 'h') return fail(g, "a 32-bit address (%s): ncclsim's addresses are 64-bit", a);
  sb_printf(v, "((char *)(uintptr_t)(%s) + (%s))", o->expr, off);
  return true;
}

/* Stores `val` (of C type t) in output operand a. */
static bool put(gen *g, const char *a, const char *val) {
  const asm_operand *o = operand(g, a);
  if (!o || (size_t)(o - g->ops) >= g->nout) return fail(g, "destination '%s' (expected an output operand)", a);
  sb_printf(&g->out, "::__ncclsim_ptx::put(%s, %s); ", o->expr, val);
  return true;
}

/* "{%0, %1}" -> its elements (the first max); how many it has. */
static int elements(char *a, char **out, int max) {
  size_t n = strlen(a);
  if (n < 2 || a[0] != '{' || a[n - 1] != '}') return 0;
  a[n - 1] = 0;
  int k = 0;
  for (char *save = NULL, *t = strtok_r(a + 1, ",", &save); t; t = strtok_r(NULL, ",", &save), k++)
    if (k < max) out[k] = trim(t);
  return k;
}

static const char *order_of(const insn *in, const char *dflt) {
  if (has(in, "volatile")) return "__ncclsim_ptx::VOLATILE";
  if (has(in, "relaxed")) return "__ncclsim_ptx::RELAXED";
  if (has(in, "acquire")) return "__ncclsim_ptx::ACQUIRE";
  if (has(in, "release")) return "__ncclsim_ptx::RELEASE";
  if (has(in, "acq_rel")) return "__ncclsim_ptx::ACQ_REL";
  if (has(in, "sc")) return "__ncclsim_ptx::SEQ_CST";
  return dflt;
}

static bool gen_ld(gen *g, insn *in) {
  const char *t = type_of(in);
  if (!t || in->nargs != 2) return fail(g, "ld with operands or type ncclsim does not read (%s)", in->op);
  sbuf a = {0};
  if (!address(g, in->args[1], &a)) return false;
  const char *ord = order_of(in, "__ncclsim_ptx::WEAK");
  int n = has(in, "v4") ? 4 : has(in, "v2") ? 2 : has(in, "v8") ? 8 : 1;
  char *el[8];
  if (n == 1) {
    el[0] = in->args[0];
  } else if (elements(in->args[0], el, 8) != n) {
    free(a.s);
    return fail(g, "ld.v%s whose destination is not a {..} list of that many", n == 2 ? "2" : n == 4 ? "4" : "8");
  }
  for (int i = 0; i < n; i++) {
    char *v = xasprintf("::__ncclsim_ptx::ld<%s, %s>(%s + %d * sizeof(%s))", t, ord, a.s, i, t);
    bool ok = put(g, el[i], v);
    free(v);
    if (!ok) break;
  }
  free(a.s);
  return !g->why;
}

static bool gen_st(gen *g, insn *in) {
  const char *t = type_of(in);
  if (!t || in->nargs != 2) return fail(g, "st with operands or type ncclsim does not read (%s)", in->op);
  sbuf a = {0};
  if (!address(g, in->args[0], &a)) return false;
  const char *ord = order_of(in, "__ncclsim_ptx::WEAK");
  int n = has(in, "v4") ? 4 : has(in, "v2") ? 2 : has(in, "v8") ? 8 : 1;
  char *el[8];
  if (n == 1) el[0] = in->args[1];
  else if (elements(in->args[1], el, 8) != n) {
    free(a.s);
    return fail(g, "st.v%s whose source is not a {..} list of that many", n == 2 ? "2" : n == 4 ? "4" : "8");
  }
  for (int i = 0; i < n && !g->why; i++) {
    sbuf v = {0};
    if (value(g, el[i], t, &v))
      sb_printf(&g->out, "::__ncclsim_ptx::st<%s, %s>(%s + %d * sizeof(%s), %s); ", t, ord, a.s, i, t, v.s);
    free(v.s);
  }
  free(a.s);
  return !g->why;
}

static const char *rmw_op(const insn *in) {
  static const char *ops[] = {"add", "min", "max", "and", "or", "xor", "inc", "dec", "exch", "cas"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (has(in, ops[i])) return ops[i];
  return NULL;
}

/* red and atom: a read-modify-write on memory. */
static bool gen_rmw(gen *g, insn *in, bool returns) {
  const char *t = type_of(in), *op = rmw_op(in);
  if (!t || !op) return fail(g, "%s with an operation or type ncclsim does not carry out", in->op);
  if (!returns && (!strcmp(op, "exch") || !strcmp(op, "cas"))) return fail(g, "red.%s", op);
  int a0 = returns ? 1 : 0, need = returns ? (strcmp(op, "cas") ? 3 : 4) : 2;
  if (in->nargs != need) return fail(g, "%s with a wrong number of operands", in->op);
  sbuf a = {0}, v = {0}, w = {0};
  bool ok = address(g, in->args[a0], &a) && value(g, in->args[a0 + 1], t, &v) &&
            (need < 4 || value(g, in->args[a0 + 2], t, &w));
  if (ok) {
    const char *ord = order_of(in, "__ncclsim_ptx::RELAXED");
    char *call = !strcmp(op, "cas")
                     ? xasprintf("::__ncclsim_ptx::atom_cas<%s, %s>(%s, %s, %s)", t, ord, a.s, v.s, w.s)
                     : xasprintf("::__ncclsim_ptx::atom<::__ncclsim_ptx::OP_%s, %s, %s>(%s, %s)", op, t, ord, a.s, v.s);
    if (returns) ok = put(g, in->args[0], call);
    else sb_printf(&g->out, "%s; ", call);
    free(call);
  }
  free(a.s);
  free(v.s);
  free(w.s);
  return ok;
}

static bool gen_fence(gen *g, insn *in) {
  if (!strcmp(in->op, "membar")) {
    if (has(in, "cta") || has(in, "gl") || has(in, "sys")) {
      sb_puts(&g->out, "::__ncclsim_ptx::fence(::__ncclsim_ptx::SEQ_CST); ");
      return true;
    }
    return fail(g, "membar.%s", in->nmods ? in->mods[0] : "");
  }
  if (has(in, "proxy") || has(in, "mbarrier_init")) return fail(g, "fence.%s (proxy fences: ncclsim has one proxy)", in->mods[0]);
  sb_printf(&g->out, "::__ncclsim_ptx::fence(%s); ", order_of(in, "__ncclsim_ptx::SEQ_CST"));
  return true;
}

static bool gen_mov(gen *g, insn *in) {
  const char *t = type_of(in);
  if (!t || in->nargs != 2) return fail(g, "mov with operands ncclsim does not read (%s)", in->op);
  const char *src = in->args[1];
  static const struct {
    const char *reg, *expr;
  } special[] = {{"%laneid", "::__ncclsim_ptx::laneid()"},
                 {"%warpid", "::__ncclsim_ptx::warpid()"},
                 {"%nwarpid", "::__ncclsim_ptx::nwarpid()"},
                 {"%smid", "::__ncclsim_ptx::smid()"},
                 {"%nsmid", "::__ncclsim_ptx::nsmid()"},
                 {"%lanemask_eq", "::__ncclsim_ptx::lanemask(0)"},
                 {"%lanemask_lt", "::__ncclsim_ptx::lanemask(1)"},
                 {"%lanemask_le", "::__ncclsim_ptx::lanemask(2)"},
                 {"%lanemask_gt", "::__ncclsim_ptx::lanemask(3)"},
                 {"%lanemask_ge", "::__ncclsim_ptx::lanemask(4)"},
                 {"%clock", "::__ncclsim_ptx::clock32()"},
                 {"%clock64", "::clock64()"},
                 {"%globaltimer", "::__ncclsim_ptx::globaltimer()"},
                 {"%tid.x", "threadIdx.x"},   {"%tid.y", "threadIdx.y"},   {"%tid.z", "threadIdx.z"},
                 {"%ntid.x", "blockDim.x"},   {"%ntid.y", "blockDim.y"},   {"%ntid.z", "blockDim.z"},
                 {"%ctaid.x", "blockIdx.x"},  {"%ctaid.y", "blockIdx.y"},  {"%ctaid.z", "blockIdx.z"},
                 {"%nctaid.x", "gridDim.x"},  {"%nctaid.y", "gridDim.y"},  {"%nctaid.z", "gridDim.z"}};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    if (!strcmp(src, special[i].reg)) {
      char *v = xasprintf("(%s)(%s)", t, special[i].expr);
      bool ok = put(g, in->args[0], v);
      free(v);
      return ok;
    }
  if (src[0] == '%' && !operand(g, src)) return fail(g, "mov from register %s", src);
  sbuf v = {0};
  bool ok = value(g, src, t, &v) && put(g, in->args[0], v.s);
  free(v.s);
  return ok;
}

static bool gen_one(gen *g, char *text) {
  char *p = trim(text); /* never empty: nvcc_ptx skips those */
  if (*p == '@') return fail(g, "a predicated instruction (%s)", p);
  if (*p == '.') return fail(g, "a declaration (%s): inline PTX with its own registers", p);
  char written[256]; /* as written, for messages: split() cuts p */
  snprintf(written, sizeof written, "%s", p);
  insn in;
  if (!split(p, &in)) return fail(g, "'%s' (cannot read it)", written);
  if (!strcmp(in.op, "ld")) return gen_ld(g, &in);
  if (!strcmp(in.op, "st")) return gen_st(g, &in);
  if (!strcmp(in.op, "red")) return gen_rmw(g, &in, false);
  if (!strcmp(in.op, "atom")) return gen_rmw(g, &in, true);
  if (!strcmp(in.op, "fence") || !strcmp(in.op, "membar")) return gen_fence(g, &in);
  if (!strcmp(in.op, "mov")) return gen_mov(g, &in);
  if (!strcmp(in.op, "activemask") && in.nargs == 1) return put(g, in.args[0], "__activemask()");
  if (!strcmp(in.op, "nanosleep") && in.nargs == 1) {
    sbuf v = {0};
    bool ok = value(g, in.args[0], "uint32_t", &v);
    if (ok) sb_printf(&g->out, "__nanosleep(%s); ", v.s);
    free(v.s);
    return ok;
  }
  if ((!strcmp(in.op, "bar") || !strcmp(in.op, "barrier")) && has(&in, "sync") && in.nargs == 1 &&
      !strcmp(in.args[0], "0")) {
    sb_puts(&g->out, "__syncthreads(); ");
    return true;
  }
  if (!strcmp(in.op, "trap") && !in.nargs) {
    sb_puts(&g->out, "__trap(); ");
    return true;
  }
  if (!strcmp(in.op, "multimem")) return fail(g, "%s (ncclsim has no multicast memory)", written);
  return fail(g, "%s", written);
}

char *nvcc_ptx(const char *tmpl, const asm_operand *ops, size_t nout, size_t nin, char **why) {
  gen g = {.ops = ops, .nops = nout + nin, .nout = nout};
  for (size_t i = 0; i < nout; i++)
    if (!strchr(ops[i].constraint, '=') && !strchr(ops[i].constraint, '+')) {
      *why = xasprintf("output operand %zu has constraint \"%s\"", i, ops[i].constraint);
      return NULL;
    }
  char *copy = xstrdup(tmpl), *save = NULL;
  /* '%%' is '%' (special registers). '{' and '}' scope .reg
   * declarations, which are refused where they are met; a '{' may share
   * its line with the first instruction ("{ mov.u32 %0, 1; }"). */
  sbuf clean = {0};
  for (const char *s = copy; *s; s++) {
    if (s[0] == '%' && s[1] == '%') {
      sb_add(&clean, "%", 1);
      s++;
    } else {
      sb_add(&clean, s, 1);
    }
  }
  free(copy);
  bool ok = true;
  if (clean.s)
    for (char *t = strtok_r(clean.s, ";\n", &save); t && ok; t = strtok_r(NULL, ";\n", &save)) {
      char *tt = trim(t);
      while (*tt == '{') tt = trim(tt + 1);
      if (!tt[strspn(tt, "} \t")]) continue;
      ok = gen_one(&g, tt);
    }
  free(clean.s);
  if (!ok) {
    *why = g.why;
    free(g.out.s);
    return NULL;
  }
  if (!g.out.s) sb_add(&g.out, "", 0);
  return g.out.s;
}
