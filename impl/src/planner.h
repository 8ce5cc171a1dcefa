/*
 * impl/src/planner.h: the graph memory planner's interface (planner.c) and the graph
 * tensor it plans, struct tsmr__gnode, which graph.c builds and keeps. The planner
 * reads a graph's tensors in execution order and gives each placed tensor a buffer
 * and an offset (spec/graphs.md). Clauses: GRAPH.REUSE.1, GRAPH.INPLACE.1,
 * GRAPH.INPUT.1, GRAPH.OUT.2, GRAPH.SINK.1, GRAPH.VIEW.1, GRAPH.PLAN.3.
 */
#ifndef TSMR_PLANNER_H
#define TSMR_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "tsmref.h"

enum { TSMR_G_EXT = -1, TSMR_G_LEAF = 0 }; /* gnode.op; > 0: enum tsmr_op */

/* One graph tensor, owned by its graph's node array (graph.c); index = creation
 * order. src, root and sib0 are indices into the same array. */
struct tsmr__gnode {
  int op;                 /* TSMR_G_EXT, TSMR_G_LEAF or an enum tsmr_op */
  int dtype, ndim;
  int64_t shape[TSMR_MAX_DIMS];
  int64_t numel;
  size_t nbytes;
  uint32_t flags;         /* enum tsmr_graph_flag bits, accumulated (FLAG.1) */
  uint32_t src[2];
  int n_src;
  uint32_t root;          /* a view's root (never a view); the node itself otherwise */
  uint32_t sib0;          /* SVD results: index of U; S and Vt follow it */
  tsmr_handle ext;        /* an external leaf's manager tensor */
  int in_graph;
  int64_t order;          /* execution index of an in-graph node, else -1 */
  /* the current plan */
  int pl_in;              /* in the graph when the plan was made */
  int pl_placed;          /* has planner memory */
  uint32_t pl_buf;
  uint64_t pl_off;
  int pl_unset;           /* a planner leaf whose bytes the plan's buffers do not hold yet:
                             neither written nor carried over, nor zeroed (graph.c) */
};

static inline int tsmr__gnode_is_view(const struct tsmr__gnode *x) {
  return x->op == TSMR_OP_RESHAPE;
}
static inline int tsmr__gnode_is_leaf(const struct tsmr__gnode *x) {
  return x->op <= TSMR_G_LEAF;
}

/* What the planner reads (borrowed from the graph for the call): the node array and
 * the in-graph tensors in execution order (every source before its consumers). */
struct tsmr__plan_input {
  const struct tsmr__gnode *n; /* n_nodes entries */
  uint32_t n_nodes;
  const uint32_t *seq;         /* n_seq node indices */
  uint32_t n_seq;
  int64_t n_exec;              /* in-graph non-leaves: times 1..n_exec */
};

/* A plan, owned by its holder until installed (graph.c takes buf_sz), freed with
 * tsmr__plan_free. Per node index: placed, buf, off. */
struct tsmr__plan {
  uint32_t n_bufs;
  size_t *buf_sz;
  uint8_t *placed;
  uint32_t *buf;
  uint64_t *off;
  struct tsmr_graph_stats st;
};

/* Plans in's in-graph tensors in mode (enum tsmr_plan_mode), every block rounded up
 * to align (a power of two). p: OUT. RETURN 0 or TSMR_ENOMEM (p then holds nothing). */
int tsmr__plan_compute(const struct tsmr__plan_input *in, int mode, size_t align,
                       struct tsmr__plan *p);
void tsmr__plan_free(struct tsmr__plan *p);

/* The placement alone, for the unit tests: nb blocks (size, live over [start, end],
 * times 0..END) placed by one pass (enum below) or by the choice tsmr__plan_compute
 * makes; TSMR_PLACE_TREES or'ed into pass keeps the online passes' free ranges in
 * their treaps from the start (tsmr__plan_compute moves them there only past 256
 * ranges), so that a test can check that both forms give the same offsets. off: OUT
 * per block, *peak: OUT. RETURN 0, TSMR_EINVAL (a bad pass or time) or TSMR_ENOMEM. */
enum { TSMR_PLACE_CHOICE, TSMR_PLACE_OFFLINE, TSMR_PLACE_FORWARD, TSMR_PLACE_MIRRORED,
       TSMR_PLACE_TREES = 8 };
int tsmr__plan_place(uint32_t nb, const uint64_t *size, const int64_t *start,
                     const int64_t *end, int64_t END, int pass, uint64_t *off,
                     uint64_t *peak);

#endif /* TSMR_PLANNER_H */
