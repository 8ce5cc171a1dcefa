/*
 * impl/src/planner.c: the graph memory planner (spec/graphs.md, after ggml's graph
 * allocator): liveness, in-place chains and placement of a graph's tensors.
 * Clauses: GRAPH.REUSE.1, GRAPH.INPLACE.1, GRAPH.INPUT.1, GRAPH.OUT.2, GRAPH.SINK.1,
 * GRAPH.VIEW.1, GRAPH.PLAN.3.
 *
 * Liveness (REUSE.1). Time 0 is "before the first node" (every leaf is placed then);
 * the node of order i is computed at time i + 1; END = n_exec + 1. A tensor is live
 * from its start (0 for a leaf, its time for a node) to its end: the time of its last
 * consumer, or END for OUTPUT, PARAM and sinks (nothing consumes it, SINK.1). A view
 * has no memory: its end extends its root's (VIEW.1). Intervals are inclusive, so a
 * node and the sources it reads are live together.
 *
 * In place (INPLACE.1). An add/sub/mul node takes over the block of its first source
 * (argument order) that is placed by the planner (not a view, not external), neither
 * OUTPUT nor PARAM, last read by this node (consumers before it may exist, as in
 * ggml_gallocr), without a view, and of the node's dtype and shape: source and node
 * become one block live over both intervals. (Taking over only sole-consumer sources
 * left random_dag_5000 of bench/planner_ggml.c one 1 KiB block above gallocr: 951
 * blocks live at once against 950.)
 *
 * Placement. Every block (a tensor, or an in-place chain) has an interval and a size
 * rounded up to the backend's alignment. Two blocks share bytes only when their
 * intervals are disjoint, so OUTPUT, PARAM and sink blocks (live to END) share with
 * nothing placed after them (OUT.2), and all leaves (live at time 0) are at distinct
 * memory (INPUT.1). The peak is at most the sum of the sizes (PLAN.3). Up to three
 * passes place the blocks, and the lowest peak wins (place_reuse):
 *   - offline, greedy by size (TFLite's strategy: largest first, each at the lowest
 *     offset no placed block live at the same time uses), the best plans but O(n^2),
 *     so only on graphs of up to PLAN_OFFLINE_MAX blocks;
 *   - online in time order, forward and with the time axis mirrored: ggml_gallocr's
 *     approach (best fit among the free ranges, a range given back merged with its
 *     free neighbours), with the free ranges in a flat array sorted by offset while
 *     they are few (at most 256), else in two treaps, by size and by offset, so that a
 *     pass is O(n log n) however many ranges there are.
 * Every pass and every tie is decided by a total order, so the plan is the same on
 * every run. Figures: bench/README.md.
 * TSMR_PLAN_NONE: one buffer per placed tensor, nothing shared, nothing in place.
 */
#define _POSIX_C_SOURCE 200809L
#include "planner.h"

#include <string.h>
#include <time.h>

#include "internal.h"

#define PLAN_NO_BLOCK UINT32_MAX

/* Placed by the planner: an in-graph leaf or non-view node. */
static int placeable(const struct tsmr__gnode *x) {
  return x->op != TSMR_G_EXT && !tsmr__gnode_is_view(x);
}

static int same_layout(const struct tsmr__gnode *a, const struct tsmr__gnode *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct block {
  uint64_t size, off;
  int64_t start, end;
  uint32_t id; /* its index in plan_ws.bl (a copy in plan_ws.sorted knows its own) */
};

/* The planner's scratch for one call, all in one allocation (mem) owned by it; per
 * node index (tm .. blk), per block (bl .. off_b: S + 1 each, rev 2 S + 2, fb S + 2) or
 * per time (diff). */
struct plan_ws {
  int64_t *tm, *end;         /* computed at (a tensor's start), live to */
  uint32_t *cons, *nviews;   /* consumer edges; views of a root */
  uint32_t *blk;             /* a tensor's block, or PLAN_NO_BLOCK */
  struct block *bl, *sorted; /* blocks; a copy sorted for placement */
  struct skey *key, *ktmp;   /* order_by_time's keys and merge scratch */
  uint32_t *ord_s, *ord_e;   /* blocks by start, by end; ord_s: by offset (offline) */
  uint32_t *rev;             /* the mirrored pass's orders */
  uint64_t *off_a, *off_b;   /* offsets per block: the best pass's, the next pass's */
  struct fblock *fb;         /* free ranges of the online pass */
  int64_t *diff;             /* per time: the bound's sweep, the online pass's counts */
  uint32_t nb;               /* blocks made */
  void *mem;
};

void tsmr__plan_free(struct tsmr__plan *p) {
  tsmr__free(p->buf_sz);
  tsmr__free(p->placed);
  tsmr__free(p->buf);
  tsmr__free(p->off);
  memset(p, 0, sizeof *p);
}

/* ---- placement ------------------------------------------------------------------ */

#define FB_NIL UINT32_MAX

/* A free range [off, off + size) of the buffer below the tail, in two treaps at once:
 * tree 0 ordered by size then offset (best fit: the first range at least as large as
 * a request), tree 1 by offset (the neighbours a freed block merges with). */
struct fblock {
  uint64_t off, size;
  uint32_t prio;
  uint32_t kid[2][2]; /* [tree][0: left, 1: right] */
};

/* The free space while blocks are placed in time order: the ranges below the tail, and
 * [tail, infinity), never used yet or given back at the top. The ranges are first kept
 * in flat_size and flat_off, sorted by offset: on the bench corpus a pass holds some 15 to 25 of them
 * (at most 154 on the 5,000-node DAGs, more on the 50,000-node one), and a scan of a few cache lines costs less than
 * the treaps' pointer walks (which took over half of a 5,000-node plan). Past
 * FLAT_MAX ranges they move into the treaps for the rest of the pass (trees set), so
 * that a pass stays O(n log n) on any graph; both forms take the same range for every
 * request (best fit, the lowest offset among equal sizes) and merge the same way, so
 * the plan does not depend on which one held the ranges. Treap nodes come from a pool
 * of cap (one more than the blocks: a block's free creates at most one range),
 * recycled through spare (a list linked by kid[0][0]). */
#define FLAT_MAX 256

struct fset {
  struct fblock *f;
  uint32_t cap, used, spare, root[2];
  uint64_t tail, peak, rng;
  int trees;
  uint32_t nflat;
  uint64_t flat_size[FLAT_MAX], flat_off[FLAT_MAX]; /* apart: the best fit reads sizes */
};

static int fb_less(const struct fset *s, int t, uint32_t a, uint32_t b) {
  const struct fblock *x = &s->f[a], *y = &s->f[b];
  if (t == 0 && x->size != y->size) return x->size < y->size;
  return x->off < y->off;
}

/* Joins treaps a and b of tree t, every key of a below every key of b. */
static uint32_t fb_merge(struct fset *s, int t, uint32_t a, uint32_t b) {
  if (a == FB_NIL) return b;
  if (b == FB_NIL) return a;
  if (s->f[a].prio > s->f[b].prio) {
    s->f[a].kid[t][1] = fb_merge(s, t, s->f[a].kid[t][1], b);
    return a;
  }
  s->f[b].kid[t][0] = fb_merge(s, t, a, s->f[b].kid[t][0]);
  return b;
}

/* Adds x to the subtree r of tree t: RETURN the new subtree. */
static uint32_t fb_insert(struct fset *s, int t, uint32_t r, uint32_t x) {
  if (r == FB_NIL) {
    s->f[x].kid[t][0] = s->f[x].kid[t][1] = FB_NIL;
    return x;
  }
  int side = !fb_less(s, t, x, r);
  uint32_t k = fb_insert(s, t, s->f[r].kid[t][side], x);
  s->f[r].kid[t][side] = k;
  if (s->f[k].prio > s->f[r].prio) { /* rotate k above r */
    s->f[r].kid[t][side] = s->f[k].kid[t][!side];
    s->f[k].kid[t][!side] = r;
    return k;
  }
  return r;
}

/* Takes x out of the subtree r of tree t (x is in it): RETURN the new subtree. */
static uint32_t fb_erase(struct fset *s, int t, uint32_t r, uint32_t x) {
  if (r == x) return fb_merge(s, t, s->f[x].kid[t][0], s->f[x].kid[t][1]);
  int side = !fb_less(s, t, x, r);
  s->f[r].kid[t][side] = fb_erase(s, t, s->f[r].kid[t][side], x);
  return r;
}

static uint32_t fb_new(struct fset *s, uint64_t off, uint64_t size) {
  uint32_t x = s->spare;
  if (x != FB_NIL) s->spare = s->f[x].kid[0][0];
  else x = s->used++;
  s->rng ^= s->rng << 13; /* xorshift: fixed seed, so the plan is the same every run */
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  s->f[x].off = off;
  s->f[x].size = size;
  s->f[x].prio = (uint32_t)(s->rng >> 32);
  s->root[0] = fb_insert(s, 0, s->root[0], x);
  s->root[1] = fb_insert(s, 1, s->root[1], x);
  return x;
}

static void fb_drop(struct fset *s, uint32_t x) {
  s->root[0] = fb_erase(s, 0, s->root[0], x);
  s->root[1] = fb_erase(s, 1, s->root[1], x);
  s->f[x].kid[0][0] = s->spare;
  s->spare = x;
}

/* x's size changes (its offset may too, keeping its place among the offsets). */
static void fb_resize(struct fset *s, uint32_t x, uint64_t off, uint64_t size) {
  s->root[0] = fb_erase(s, 0, s->root[0], x);
  s->f[x].off = off;
  s->f[x].size = size;
  s->root[0] = fb_insert(s, 0, s->root[0], x);
}

/* Best fit: the smallest free range of at least size bytes, the lowest of equal ones. */
static uint32_t fb_best(const struct fset *s, uint64_t size) {
  uint32_t r = s->root[0], best = FB_NIL;
  while (r != FB_NIL) {
    if (s->f[r].size >= size) best = r, r = s->f[r].kid[0][0];
    else r = s->f[r].kid[0][1];
  }
  return best;
}

/* The free range with the highest offset below off (side 0), or the lowest at or
 * above it (side 1); FB_NIL if none. */
static uint32_t fb_near(const struct fset *s, uint64_t off, int side) {
  uint32_t r = s->root[1], got = FB_NIL;
  while (r != FB_NIL) {
    int above = s->f[r].off >= off;
    if (above == side) got = r;
    r = s->f[r].kid[1][!above];
  }
  return got;
}

/* The flat ranges' best fit: the smallest of at least size bytes, the lowest of equal
 * ones (the scan runs by offset, takes only a strictly smaller one, and stops at the
 * first exact fit); FB_NIL if none. */
static uint32_t flat_best(const struct fset *s, uint64_t size) {
  uint32_t best = FB_NIL;
  uint64_t best_size = UINT64_MAX;
  for (uint32_t i = 0; i < s->nflat; i++) {
    uint64_t z = s->flat_size[i];
    if (z == size) return i;
    if (z > size && z < best_size) {
      best = i;
      best_size = z;
    }
  }
  return best;
}

/* Opens (gap 1) or closes (gap 0) the slot i of the flat ranges. */
static void flat_shift(struct fset *s, uint32_t i, int gap) {
  uint32_t from = gap ? i : i + 1, to = gap ? i + 1 : i;
  size_t n = (size_t)(s->nflat - from) * sizeof s->flat_size[0];
  memmove(&s->flat_size[to], &s->flat_size[from], n);
  memmove(&s->flat_off[to], &s->flat_off[from], n);
  s->nflat = gap ? s->nflat + 1 : s->nflat - 1;
}

/* Moves the flat ranges into the treaps, for good (this pass). */
static void flat_to_trees(struct fset *s) {
  for (uint32_t i = 0; i < s->nflat; i++) fb_new(s, s->flat_off[i], s->flat_size[i]);
  s->nflat = 0;
  s->trees = 1;
}

/* RETURN where size bytes go: the best-fitting free range's low end, else the tail. */
static uint64_t fs_alloc(struct fset *s, uint64_t size) {
  uint32_t b = s->trees ? fb_best(s, size) : flat_best(s, size);
  if (b == FB_NIL) {
    uint64_t off = s->tail;
    s->tail += size;
    if (s->tail > s->peak) s->peak = s->tail;
    return off;
  }
  if (!s->trees) { /* the rest of the range keeps its place among the offsets */
    uint64_t off = s->flat_off[b];
    if (s->flat_size[b] == size) flat_shift(s, b, 0);
    else s->flat_off[b] += size, s->flat_size[b] -= size;
    return off;
  }
  uint64_t off = s->f[b].off;
  if (s->f[b].size == size) fb_drop(s, b);
  else fb_resize(s, b, off + size, s->f[b].size - size);
  return off;
}

/* fs_free on the flat ranges: the same four cases as the treaps', at the index pos
 * where a range at off would go. */
static void flat_free(struct fset *s, uint64_t off, uint64_t size) {
  uint32_t lo = 0, hi = s->nflat;
  while (lo < hi) { /* pos: the first range above off */
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->flat_off[mid] < off) lo = mid + 1;
    else hi = mid;
  }
  uint32_t pos = lo;
  int below = pos > 0 && s->flat_off[pos - 1] + s->flat_size[pos - 1] == off;
  int above = pos < s->nflat && s->flat_off[pos] == off + size;
  if (off + size == s->tail) {
    s->tail = below ? s->flat_off[pos - 1] : off;
    if (below) flat_shift(s, pos - 1, 0);
  } else if (below && above) {
    s->flat_size[pos - 1] += size + s->flat_size[pos];
    flat_shift(s, pos, 0);
  } else if (below) {
    s->flat_size[pos - 1] += size;
  } else if (above) {
    s->flat_off[pos] = off;
    s->flat_size[pos] += size;
  } else if (s->nflat == FLAT_MAX) {
    flat_to_trees(s);
    fb_new(s, off, size);
  } else {
    flat_shift(s, pos, 1);
    s->flat_off[pos] = off;
    s->flat_size[pos] = size;
  }
}

/* Gives [off, off + size) back, merged with the free ranges or tail it touches. */
static void fs_free(struct fset *s, uint64_t off, uint64_t size) {
  if (!s->trees) {
    flat_free(s, off, size);
    return;
  }
  uint32_t lo = fb_near(s, off, 0), hi = fb_near(s, off + size, 1);
  if (lo != FB_NIL && s->f[lo].off + s->f[lo].size != off) lo = FB_NIL;
  if (hi != FB_NIL && s->f[hi].off != off + size) hi = FB_NIL;
  if (off + size == s->tail) {
    s->tail = lo != FB_NIL ? s->f[lo].off : off;
    if (lo != FB_NIL) fb_drop(s, lo);
  } else if (lo != FB_NIL && hi != FB_NIL) {
    uint64_t joined = s->f[lo].size + size + s->f[hi].size;
    fb_drop(s, hi);
    fb_resize(s, lo, s->f[lo].off, joined);
  } else if (lo != FB_NIL) {
    fb_resize(s, lo, s->f[lo].off, s->f[lo].size + size);
  } else if (hi != FB_NIL) {
    fb_resize(s, hi, off, s->f[hi].size + size);
  } else {
    fb_new(s, off, size);
  }
}

/* A block's sort key within one time: its size and index. */
struct skey {
  uint64_t size;
  uint32_t id;
};

/* At one time: the largest first, then the lower block index (a total order, so the
 * plan does not depend on the sort). */
static int key_before(const struct skey *a, const struct skey *b) {
  return a->size != b->size ? a->size > b->size : a->id < b->id;
}

/* Sorts k[0..n) by key_before: insertion sort of runs of 16, merged bottom-up through
 * tmp (n entries). No qsort: the calls through its comparator cost more than the
 * groups' sorting itself (the leaves at time 0, the pinned blocks at END). */
static void sort_keys(struct skey *k, uint32_t n, struct skey *tmp) {
  enum { RUN = 16 };
  for (uint32_t lo = 0; lo < n; lo += RUN) {
    uint32_t hi = n - lo > RUN ? lo + RUN : n;
    for (uint32_t i = lo + 1; i < hi; i++) {
      struct skey x = k[i];
      uint32_t j = i;
      for (; j > lo && key_before(&x, &k[j - 1]); j--) k[j] = k[j - 1];
      k[j] = x;
    }
  }
  for (uint64_t w = RUN; w < n; w *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * w) {
      uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      uint64_t x = lo, y = mid, o = lo;
      while (x < mid && y < hi) tmp[o++] = key_before(&k[y], &k[x]) ? k[y++] : k[x++];
      while (x < mid) tmp[o++] = k[x++];
      while (y < hi) tmp[o++] = k[y++];
    }
    memcpy(k, tmp, (size_t)n * sizeof *k);
  }
}

/* ord: OUT, the block indices by time (start, or end when by_end) ascending, at one
 * time largest first: a counting sort (times are 0..END) of keys into key (nb), each
 * time's group sorted there (tmp: nb). cnt: END + 2 counters. O(nb + END + the groups'
 * g log g). */
static void order_by_time(const struct block *bl, uint32_t nb, int64_t END, int by_end,
                          int64_t *cnt, struct skey *key, struct skey *tmp, uint32_t *ord) {
  memset(cnt, 0, ((size_t)END + 2) * sizeof *cnt);
  for (uint32_t i = 0; i < nb; i++) cnt[(by_end ? bl[i].end : bl[i].start) + 1]++;
  for (int64_t t = 1; t <= END + 1; t++) cnt[t] += cnt[t - 1];
  for (uint32_t i = 0; i < nb; i++) {
    struct skey k = {bl[i].size, bl[i].id};
    key[cnt[by_end ? bl[i].end : bl[i].start]++] = k;
  }
  for (int64_t t = 0, lo = 0; t <= END; lo = cnt[t++]) /* cnt[t]: where group t ends */
    if (cnt[t] - lo > 1) sort_keys(key + lo, (uint32_t)(cnt[t] - lo), tmp);
  for (uint32_t i = 0; i < nb; i++) ord[i] = key[i].id;
}

/* ord reversed group by group: the times descending, each time's order kept. */
static void reverse_groups(const struct block *bl, uint32_t nb, int by_end,
                           const uint32_t *ord, uint32_t *out) {
  uint32_t k = 0;
  for (uint32_t hi = nb; hi > 0;) {
    uint32_t lo = hi - 1;
    int64_t t = by_end ? bl[ord[lo]].end : bl[ord[lo]].start;
    while (lo > 0 && (by_end ? bl[ord[lo - 1]].end : bl[ord[lo - 1]].start) == t) lo--;
    for (uint32_t i = lo; i < hi; i++) out[k++] = ord[i];
    hi = lo;
  }
}

/* The online pass: the blocks in time order, each given back once its interval is
 * over and before the next one starts, best fit with merge on free (gallocr's way,
 * with the free ranges in a flat array, or in trees past FLAT_MAX: O(nb log nb)
 * whatever the graph; trees: in the trees from the start, for the tests). reverse: the time
 * axis mirrored (every [s, e] taken as [END - e, END - s]), as valid a plan and often
 * a better one: that pass meets the pinned blocks (live to END) first. ord_s, ord_e:
 * the blocks by start and by end (order_by_time); rev: scratch of 2 nb; fb: nb + 1
 * free ranges; off: OUT per block index. RETURN the peak. */
static uint64_t online_pass(const struct block *bl, uint32_t nb, int reverse, int trees,
                            const uint32_t *ord_s, const uint32_t *ord_e, uint32_t *rev,
                            struct fblock *fb, uint64_t *off) {
  struct fset s;
  s.f = fb;
  s.cap = nb + 1;
  s.used = 0;
  s.spare = s.root[0] = s.root[1] = FB_NIL;
  s.tail = s.peak = 0;
  s.rng = 0x9E3779B97F4A7C15ull;
  s.trees = trees;
  s.nflat = 0;
  const uint32_t *alloc = ord_s, *give = ord_e;
  if (reverse) { /* allocations by end descending, frees by start descending */
    reverse_groups(bl, nb, 1, ord_e, rev);
    for (uint32_t i = 0; i < nb; i++) rev[nb + i] = ord_s[nb - 1 - i];
    alloc = rev;
    give = rev + nb;
  }
  uint32_t fi = 0;
  for (uint32_t i = 0; i < nb; i++) {
    const struct block *b = &bl[alloc[i]];
    for (; fi < nb; fi++) { /* the blocks whose (mirrored) interval ended before b's */
      const struct block *e = &bl[give[fi]];
      if (reverse ? e->start <= b->end : e->end >= b->start) break;
      if (e->size) fs_free(&s, off[give[fi]], e->size);
    }
    off[alloc[i]] = b->size ? fs_alloc(&s, b->size) : 0; /* zero bytes overlap nothing */
  }
  return s.peak;
}

/* Largest first; then earliest, then block index. */
static int cmp_size_desc(const void *a, const void *b) {
  const struct block *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

/* Where b goes among the placed blocks (sorted by offset, n of them): the lowest
 * offset whose bytes no placed block live at the same time as b uses (first fit).
 * Scanning in offset order stops at the first gap that fits. */
static uint64_t first_fit(const struct block *bl, const struct block *b,
                          const uint32_t *by_off, uint32_t n) {
  uint64_t cur = 0;
  for (uint32_t j = 0; j < n; j++) {
    const struct block *c = &bl[by_off[j]];
    if (c->end < b->start || c->start > b->end) continue; /* not live together */
    if (c->off >= cur + b->size) break;
    if (c->off + c->size > cur) cur = c->off + c->size;
  }
  return cur;
}

/* Inserts block k (placed) into by_off, kept sorted by offset; n: entries before. */
static void insert_by_off(const struct block *bl, uint32_t *by_off, uint32_t n,
                          uint32_t k) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (bl[by_off[mid]].off <= bl[k].off) lo = mid + 1;
    else hi = mid;
  }
  memmove(by_off + lo + 1, by_off + lo, (size_t)(n - lo) * sizeof *by_off);
  by_off[lo] = k;
}

/* The offline pass, TFLite's greedy by size: the blocks largest first, each at the
 * lowest offset free over its whole interval (first fit: on the bench corpus within 2%
 * of the bound where best fit, the smallest gap, was up to 14% above it). Placing a
 * block scans the placed blocks in offset order up to the first gap that fits, so the
 * pass costs O(nb^2). off: OUT per block index; sorted, by_off: scratch of nb. RETURN
 * the peak. */
static uint64_t offline_pass(const struct block *bl, uint32_t nb, struct block *sorted,
                             uint32_t *by_off, uint64_t *off) {
  uint32_t n_placed = 0;
  uint64_t peak = 0;
  memcpy(sorted, bl, (size_t)nb * sizeof *sorted);
  qsort(sorted, nb, sizeof *sorted, cmp_size_desc);
  for (uint32_t i = 0; i < nb; i++) {
    struct block *b = &sorted[i];
    b->off = 0;
    if (b->size != 0) {
      b->off = first_fit(sorted, b, by_off, n_placed);
      if (b->off + b->size > peak) peak = b->off + b->size;
      insert_by_off(sorted, by_off, n_placed++, i);
    }
    off[b->id] = b->off;
  }
  return peak;
}

/* The largest block count the offline pass runs on: it scans about a third of the
 * placed blocks per block on bench/bench_graphs.c's random DAGs (some 32 at 100 nodes,
 * 300 at 1000, 1500 at 5000), so up to 256 blocks it costs at most about as much as
 * the two online passes, and beyond it would make the plan O(n^2). */
#define PLAN_OFFLINE_MAX 256

/* Places the blocks and sets bl's offsets; RETURN the peak (buffer bytes). Up to three
 * passes, the lowest peak kept (the earlier on a tie): the offline pass on graphs of
 * up to PLAN_OFFLINE_MAX blocks (on the bench corpus it is within 2% of the liveness
 * bound), then the online pass forward and mirrored (alone, up to 15% above the bound
 * on small graphs; the better of the two within 2% on the large random DAGs:
 * bench/README.md). only: one pass (TSMR_PLACE_*), or TSMR_PLACE_CHOICE for all that
 * apply; TSMR_PLACE_TREES or'ed in: the online passes in the treaps from the start. */
static uint64_t place_reuse(struct block *bl, uint32_t nb, int64_t END, struct plan_ws *w,
                            int only) {
  uint64_t *best = w->off_a, *cand = w->off_b, peak = UINT64_MAX;
  int trees = (only & TSMR_PLACE_TREES) != 0;
  only &= ~TSMR_PLACE_TREES;
  if (only == TSMR_PLACE_OFFLINE || (!only && nb <= PLAN_OFFLINE_MAX))
    peak = offline_pass(bl, nb, w->sorted, w->ord_s, best);
  order_by_time(bl, nb, END, 0, w->diff, w->key, w->ktmp, w->ord_s);
  order_by_time(bl, nb, END, 1, w->diff, w->key, w->ktmp, w->ord_e);
  for (int reverse = 0; reverse < 2; reverse++) {
    if (only && only != TSMR_PLACE_FORWARD + reverse) continue;
    uint64_t p =
        online_pass(bl, nb, reverse, trees, w->ord_s, w->ord_e, w->rev, w->fb, cand);
    if (p < peak) {
      uint64_t *t = best;
      best = cand;
      cand = t;
      peak = p;
    }
  }
  for (uint32_t i = 0; i < nb; i++) bl[i].off = best[i];
  return nb ? peak : 0;
}

/* ---- liveness and blocks -------------------------------------------------------- */

/* Times, consumer counts, views, and ends as the last consumer's time: one walk over
 * the nodes (the sources come before their consumers, and each node is read once while
 * in cache); make_blocks finishes the ends. */
static void liveness(const struct tsmr__plan_input *in, struct plan_ws *w) {
  const struct tsmr__gnode *n = in->n;
  int64_t *tm = w->tm, *end = w->end;
  uint32_t *cons = w->cons;
  for (uint32_t i = 0; i < in->n_seq; i++) {
    uint32_t x = in->seq[i];
    tm[x] = end[x] = tsmr__gnode_is_leaf(&n[x]) ? 0 : n[x].order + 1;
    w->blk[x] = PLAN_NO_BLOCK;
    if (n[x].op != TSMR_OP_SVD || x == n[x].sib0) /* an SVD reads its source once */
      for (int j = 0; j < n[x].n_src; j++) cons[n[x].src[j]]++;
    if (tsmr__gnode_is_view(&n[x])) w->nviews[n[x].root]++;
    for (int j = 0; j < n[x].n_src; j++)
      if (end[n[x].src[j]] < tm[x]) end[n[x].src[j]] = tm[x];
  }
}

/* The block node x (an add/sub/mul) takes over from a source (INPLACE.1): the first
 * (argument order) that is placed, neither OUTPUT nor PARAM, without a view, of x's
 * layout, and last read by x (its end is x's time: consumers before x may exist); or
 * PLAN_NO_BLOCK. */
static uint32_t inplace_block(const struct tsmr__gnode *n, const struct plan_ws *w,
                              uint32_t x) {
  if (n[x].op != TSMR_OP_ADD && n[x].op != TSMR_OP_SUB && n[x].op != TSMR_OP_MUL)
    return PLAN_NO_BLOCK;
  for (int j = 0; j < n[x].n_src; j++) {
    uint32_t s = n[x].src[j];
    const struct tsmr__gnode *sn = &n[s];
    if (!placeable(sn) || (sn->flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)) ||
        w->nviews[s] != 0 || !same_layout(sn, &n[x]) ||
        w->blk[s] == PLAN_NO_BLOCK || w->end[s] != w->tm[x])
      continue;
    return w->blk[s];
  }
  return PLAN_NO_BLOCK;
}

/* The ends made final and the blocks, in one walk in execution order: a tensor pinned
 * (OUTPUT, PARAM) or a sink lives to END (OUT.2, FLAG.2, SINK.1); a view extends its
 * root's end and block (VIEW.1: the root comes before it, so its block exists); a
 * placed tensor gets a block, or shares its source's (INPLACE.1: the source's end is
 * final by then, every consumer having been counted). RETURN the sum of the placed
 * tensors' aligned sizes. */
static uint64_t make_blocks(const struct tsmr__plan_input *in, int mode, size_t align,
                            int64_t END, struct plan_ws *w, struct tsmr__plan *p) {
  const struct tsmr__gnode *n = in->n;
  int64_t *end = w->end;
  uint64_t naive = 0;
  w->nb = 0;
  for (uint32_t i = 0; i < in->n_seq; i++) {
    uint32_t x = in->seq[i];
    if ((n[x].flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)) || w->cons[x] == 0) end[x] = END;
    if (tsmr__gnode_is_view(&n[x])) {
      uint32_t r = n[x].root, rb = w->blk[r];
      if (end[r] < end[x]) end[r] = end[x];
      if (rb != PLAN_NO_BLOCK && w->bl[rb].end < end[x]) w->bl[rb].end = end[x];
    }
    if (!placeable(&n[x])) continue;
    uint64_t sz = ((uint64_t)n[x].nbytes + align - 1) & ~(uint64_t)(align - 1);
    naive += sz;
    uint32_t shared = mode == TSMR_PLAN_REUSE ? inplace_block(n, w, x) : PLAN_NO_BLOCK;
    if (shared != PLAN_NO_BLOCK) {
      w->blk[x] = shared;
      if (w->bl[shared].end < end[x]) w->bl[shared].end = end[x];
      p->st.n_inplace++;
      continue;
    }
    struct block *b = &w->bl[w->nb];
    b->size = sz;
    b->start = w->tm[x];
    b->end = end[x];
    b->off = 0;
    b->id = w->nb;
    w->blk[x] = w->nb++;
  }
  return naive;
}

/* The liveness lower bound of the blocks: the largest sum of sizes live together. */
static int64_t lower_bound(const struct plan_ws *w, int64_t END) {
  memset(w->diff, 0, ((size_t)END + 2) * sizeof *w->diff);
  for (uint32_t b = 0; b < w->nb; b++) {
    w->diff[w->bl[b].start] += (int64_t)w->bl[b].size;
    w->diff[w->bl[b].end + 1] -= (int64_t)w->bl[b].size;
  }
  int64_t run = 0, bound = 0;
  for (int64_t t = 0; t <= END; t++) {
    run += w->diff[t];
    if (run > bound) bound = run;
  }
  return bound;
}

/* ---- the plan ------------------------------------------------------------------- */

/* w's arrays at base (or only their bytes, when base is NULL), each rounded up to 8
 * bytes so that every one is aligned for its type: nN per node, nS per block, nT per
 * time. RETURN the bytes. */
static size_t ws_layout(struct plan_ws *w, char *base, size_t nN, size_t nS, size_t nT) {
  size_t at = 0;
#define WS_ARRAY(field, count)                                               \
  do {                                                                       \
    if (base) w->field = (void *)(base + at);                                \
    at += ((count) * sizeof *w->field + 7) & ~(size_t)7;                     \
  } while (0)
  WS_ARRAY(tm, nN);
  WS_ARRAY(end, nN);
  WS_ARRAY(cons, nN);
  WS_ARRAY(nviews, nN);
  WS_ARRAY(blk, nN);
  WS_ARRAY(bl, nS);
  WS_ARRAY(sorted, nS);
  WS_ARRAY(key, nS);
  WS_ARRAY(ktmp, nS);
  WS_ARRAY(ord_s, nS);
  WS_ARRAY(ord_e, nS);
  WS_ARRAY(rev, 2 * nS);
  WS_ARRAY(off_a, nS);
  WS_ARRAY(off_b, nS);
  WS_ARRAY(fb, nS + 1);
  WS_ARRAY(diff, nT);
#undef WS_ARRAY
  return at;
}

/* Allocates w's arrays (in one allocation: sixteen cost a 5,000-node plan some 130 us
 * of its 4 ms in malloc and first-touch page faults) and p's per-node arrays; RETURN 0
 * or TSMR_ENOMEM. */
static int plan_alloc(struct plan_ws *w, struct tsmr__plan *p, uint32_t N, uint32_t S,
                      int64_t END) {
  size_t nN = (size_t)N + 1, nS = (size_t)S + 1, nT = (size_t)END + 2;
  memset(w, 0, sizeof *w);
  w->mem = tsmr__alloc(ws_layout(w, NULL, nN, nS, nT));
  p->placed = tsmr__alloc(nN);
  p->buf = tsmr__alloc(nN * sizeof *p->buf);
  p->off = tsmr__alloc(nN * sizeof *p->off);
  if (!w->mem || !p->placed || !p->buf || !p->off) return TSMR_ENOMEM;
  ws_layout(w, w->mem, nN, nS, nT);
  memset(w->cons, 0, nN * sizeof *w->cons);
  memset(w->nviews, 0, nN * sizeof *w->nviews);
  memset(p->placed, 0, nN);
  return 0;
}

/* Buffers and per-node places from the placed blocks. RETURN 0 or TSMR_ENOMEM. */
static int plan_fill(const struct tsmr__plan_input *in, int mode, const struct plan_ws *w,
                     uint64_t total, struct tsmr__plan *p) {
  int reuse = mode == TSMR_PLAN_REUSE;
  p->n_bufs = reuse ? 1 : w->nb;
  p->buf_sz = tsmr__alloc(((size_t)p->n_bufs + 1) * sizeof *p->buf_sz);
  if (!p->buf_sz) return TSMR_ENOMEM;
  if (reuse) p->buf_sz[0] = total;
  else
    for (uint32_t b = 0; b < w->nb; b++) p->buf_sz[b] = w->bl[b].size;
  for (uint32_t i = 0; i < in->n_seq; i++) {
    uint32_t x = in->seq[i];
    if (w->blk[x] == PLAN_NO_BLOCK) continue;
    p->placed[x] = 1;
    p->buf[x] = reuse ? 0 : w->blk[x];
    p->off[x] = reuse ? w->bl[w->blk[x]].off : 0;
  }
  return 0;
}

int tsmr__plan_compute(const struct tsmr__plan_input *in, int mode, size_t align,
                       struct tsmr__plan *p) {
  uint64_t t0 = now_ns();
  uint32_t S = in->n_seq;
  int64_t END = in->n_exec + 1;
  struct plan_ws w;
  memset(p, 0, sizeof *p);
  int rc = plan_alloc(&w, p, in->n_nodes, S, END);
  if (rc == 0) {
    liveness(in, &w);
    uint64_t naive = make_blocks(in, mode, align, END, &w, p);
    int64_t bound = lower_bound(&w, END);
    uint64_t total = 0;
    if (mode == TSMR_PLAN_REUSE) total = place_reuse(w.bl, w.nb, END, &w, TSMR_PLACE_CHOICE);
    else
      for (uint32_t b = 0; b < w.nb; b++) total += w.bl[b].size;
    rc = plan_fill(in, mode, &w, total, p);
    p->st.n_tensors = S;
    p->st.n_nodes = (uint64_t)in->n_exec;
    p->st.planned_bytes = total;
    p->st.bound_bytes = (uint64_t)bound;
    p->st.naive_bytes = naive;
  }
  tsmr__free(w.mem);
  if (rc) tsmr__plan_free(p);
  else p->st.plan_ns = now_ns() - t0;
  return rc;
}

int tsmr__plan_place(uint32_t nb, const uint64_t *size, const int64_t *start,
                     const int64_t *end, int64_t END, int pass, uint64_t *off,
                     uint64_t *peak) {
  struct plan_ws w;
  struct tsmr__plan p;
  int only = pass & ~TSMR_PLACE_TREES;
  if (only < TSMR_PLACE_CHOICE || only > TSMR_PLACE_MIRRORED || END < 0) return TSMR_EINVAL;
  for (uint32_t i = 0; i < nb; i++)
    if (start[i] < 0 || start[i] > end[i] || end[i] > END) return TSMR_EINVAL;
  memset(&p, 0, sizeof p);
  int rc = plan_alloc(&w, &p, 0, nb, END);
  if (rc == 0) {
    for (uint32_t i = 0; i < nb; i++) {
      struct block b = {size[i], 0, start[i], end[i], i};
      w.bl[i] = b;
    }
    *peak = place_reuse(w.bl, nb, END, &w, pass);
    for (uint32_t i = 0; i < nb; i++) off[i] = w.bl[i].off;
  }
  tsmr__free(w.mem);
  tsmr__plan_free(&p);
  return rc;
}
