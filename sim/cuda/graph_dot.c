/*
 * sim/cuda/graph_dot.c — cudaGraphDebugDotPrint: a graph in Graphviz's DOT
 * language (`dot -Tsvg graph.dot -o graph.svg` draws it).
 *
 * The layout follows CUDA's: a cluster for the graph, one box per node
 * named graph_<g>_node_<id>, labelled with its creation number, its type
 * and what it does (a kernel's name and configuration, a copy's bytes and
 * kind, an NCCL operation and its arguments, ...), and one edge per
 * dependency. cudaGraphDebugDotFlagsVerbose adds full parameters,
 * cudaGraphDebugDotFlagsHandles each node's handle.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

/* label text, with DOT's quotes and backslashes escaped */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
}

static const char *shape(enum cudaGraphNodeType t) {
  switch (t) {
  case cudaGraphNodeTypeKernel: return "box";
  case cudaGraphNodeTypeHost: return "octagon";
  case cudaGraphNodeTypeEventRecord:
  case cudaGraphNodeTypeWaitEvent: return "diamond";
  case cudaGraphNodeTypeEmpty: return "ellipse";
  default: return "rectangle";
  }
}

SIM_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags) {
  static const char what[] = "cudaGraphDebugDotPrint";
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g || !path) return sim_cuda_error(cudaErrorInvalidValue);
  FILE *f = fopen(path, "w");
  if (!f) {
    SIM_WARN(SIM_STREAM, "%s: cannot write %s: %s", what, path, strerror(errno));
    return sim_cuda_error(cudaErrorOperatingSystem);
  }
  bool verbose = flags & cudaGraphDebugDotFlagsVerbose;
  bool handles = verbose || (flags & cudaGraphDebugDotFlagsHandles);
  char text[512];
  fprintf(f, "digraph dot {\n  subgraph cluster_1 {\n    label=\"graph_1\" graph[style=\"dashed\"];\n");
  for (size_t i = 0; i < g->n; i++) {
    gnode *n = g->nodes[i];
    gparams_describe(&n->p, text, sizeof text, verbose);
    fprintf(f, "    \"graph_1_node_%llu\" [style=\"solid\" shape=\"%s\" label=\"%llu\\n%s\\n", (unsigned long long)n->id,
            shape(n->p.type), (unsigned long long)n->id, n->p.type == cudaGraphNodeTypeKernel && !n->p.u.k.p.func
                                                             ? "NCCL"
                                                             : gparams_type_name(n->p.type));
    put_escaped(f, text);
    if (handles) fprintf(f, "\\nnode %p", (void *)n);
    fprintf(f, "\"];\n");
  }
  fprintf(f, "  }\n");
  for (size_t i = 0; i < g->n; i++) {
    gnode *n = g->nodes[i];
    for (size_t j = 0; j < n->nin; j++)
      fprintf(f, "  \"graph_1_node_%llu\" -> \"graph_1_node_%llu\";\n", (unsigned long long)n->in[j]->id,
              (unsigned long long)n->id);
  }
  fprintf(f, "}\n");
  if (fclose(f) != 0) {
    SIM_WARN(SIM_STREAM, "%s: cannot write %s: %s", what, path, strerror(errno));
    return sim_cuda_error(cudaErrorOperatingSystem);
  }
  return cudaSuccess;
}
