/*
 * fuzz/fuzz_episode.h: graph episodes (spec/graphs.md) written in the case language
 * from a fuzzer's bytes, shared by the planner target (an episode alone) and the
 * scenario target (an episode over the tensors a scenario left, as externals).
 */
#ifndef FUZZ_EPISODE_H
#define FUZZ_EPISODE_H

#include "fuzz_common.h"
#include "util.h"

#define EPISODE_MAX_NODES 48

/* The episode being written into text (not owned: the caller's buffer): the graph's
 * name, the prefix of its node names, the side k of its [k, k] leaves, and each node's
 * shape class ('2': [k, k], '1': [k*k] view, '0': 0-d) and whether it is a leaf. */
struct episode {
  struct cts_buf *text;
  const char *graph, *prefix;
  int k, n;
  char cls[EPISODE_MAX_NODES];
  int leaf[EPISODE_MAX_NODES];
};

/* `node PREFIXn = external GRAPH tensor`: never placed, freed or written (GRAPH.EXT.1);
 * its shape is taken to be [k, k] (where it is not, the model refuses what uses it). */
void episode_external(struct episode *e, const char *tensor);
/* Leaves, ops, flags, expand and compute (recompute: a later phase of the same graph,
 * GRAPH.PLAN.1). */
void episode_phase(struct fuzz_in *in, struct episode *e, int recompute);

#endif
