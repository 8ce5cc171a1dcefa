/*
 * harness/src/tools/combo_main.c: the `tsm-cts combos` command (combo.h): options, the
 * adapter's capabilities and devices (probed in a child, runner.c), the enumeration,
 * the run, the report and the exit status: 0 when no divergence is of an unknown
 * class, 1 otherwise, 2 on a usage or harness error.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "combo.h"
#include "runner.h"
#include "spec_index.h"


/* The command line; the strings point into argv. */
struct combos_options {
  int depth, seeds, jobs, chunk;
  const char *adapter, *device, *spec, *json, *save, *known;
};

static const struct option combos_long_options[] = {
    {"depth", required_argument, NULL, 'D'}, {"seeds", required_argument, NULL, 'K'},
    {"jobs", required_argument, NULL, 'j'},
    {"chunk", required_argument, NULL, 'C'}, {"adapter", required_argument, NULL, 'a'},
    {"device", required_argument, NULL, 'd'}, {"spec", required_argument, NULL, 'S'},
    {"json", required_argument, NULL, 'o'},  {"save", required_argument, NULL, 's'},
    {"known", required_argument, NULL, 'k'}, {NULL, 0, NULL, 0},
};

static int combos_usage(void) {
  fputs("usage: tsm-cts combos [--depth N] [--seeds K] [-j N] [--adapter SO]\n"
        "                      [--device NAME] [--known FILE] [--json FILE] [--save DIR]\n"
        "                      [--spec DIR] [--chunk N]\n"
        "Each statement row makes a focus resource after a fixed background; up to N (2,\n"
        "at most 4) statements on it, or on what it was made from, follow. Every\n"
        "combination runs with the model deciding each outcome. K (2): how many draws of\n"
        "what the rows leave open (operands not held, shapes, strides, flags).\n"
        "SO: default $TSM_CTS_GEN_ADAPTER, else build/lib/tsmref_adapter.so. NAME: a device\n"
        "of the adapter (default its first). FILE (--known): `PATTERN | REASON` lines, an\n"
        "extended regular expression over a divergence's message. --save: each diverging\n"
        "combination completed against the model, as a case. --chunk: combinations per\n"
        "case process (512; each process loads the adapter once).\n", stderr);
  return 2;
}

/* Where each option goes in struct combos_options: a number, or a string from argv. */
static const struct {
  int code;
  int is_number;
  size_t offset;
} combos_option_fields[] = {
    {'D', 1, offsetof(struct combos_options, depth)},
    {'K', 1, offsetof(struct combos_options, seeds)},
    {'j', 1, offsetof(struct combos_options, jobs)},
    {'C', 1, offsetof(struct combos_options, chunk)},
    {'a', 0, offsetof(struct combos_options, adapter)},
    {'d', 0, offsetof(struct combos_options, device)},
    {'S', 0, offsetof(struct combos_options, spec)},
    {'o', 0, offsetof(struct combos_options, json)},
    {'s', 0, offsetof(struct combos_options, save)},
    {'k', 0, offsetof(struct combos_options, known)},
};

/* Stores option `code` with its value. RETURN 0, or -1 for an unknown option. */
static int set_combos_option(struct combos_options *o, int code, const char *value) {
  for (size_t i = 0; i < sizeof combos_option_fields / sizeof combos_option_fields[0]; i++) {
    if (combos_option_fields[i].code != code) continue;
    void *field = (char *)o + combos_option_fields[i].offset;
    if (combos_option_fields[i].is_number) *(int *)field = atoi(value);
    else *(const char **)field = value;
    return 0;
  }
  return -1;
}

static int parse_combos_options(int argc, char **argv, struct combos_options *o) {
  *o = (struct combos_options){2, 2, 1, 512, cts_gen_default_adapter(), NULL, NULL, NULL, NULL,
                               NULL};
  int code;
  optind = 1;
  while ((code = getopt_long(argc, argv, "j:", combos_long_options, NULL)) != -1)
    if (set_combos_option(o, code, optarg) != 0) return -1;
  if (optind != argc || o->depth < 0 || o->depth > COMBO_MAX_DEPTH || o->seeds < 1 ||
      o->jobs < 1 || o->chunk < 1)
    return -1;
  return 0;
}

/* Enumerates, runs and reports. RETURN the exit status. */
static int combos_run(const struct combos_options *o, const struct cts_adapter_facts *f,
                      int device, const struct cts_spec *spec, const struct combo_known *k) {
  double start = cts_now_ms();
  struct combo_set set;
  struct combo_offer offer = {f->caps, f->ops, f->has_dump, f->dtypes};
  combo_enumerate(&set, &offer, o->depth, o->seeds);
  fprintf(stderr, "tsm-cts combos: %zu combinations on %s of %s\n", set.n_run,
          f->device[device], f->name);
  struct combo_opts run = {o->adapter, o->save, f->device[device], device, o->jobs, o->chunk,
                          spec};
  combo_run_all(&set, &run);
  size_t unknown = combo_report(&set, k, spec, o->json, (cts_now_ms() - start) / 1000);
  if (o->save) printf("tsm-cts combos: %zu diverging combinations written to %s\n",
                      combo_save(&set, &run), o->save);
  combo_set_free(&set);
  return unknown ? 1 : 0;
}

int cts_combos_main(int argc, char **argv) {
  struct combos_options o;
  if (parse_combos_options(argc, argv, &o)) return combos_usage();
  struct cts_adapter_facts facts;
  cts_probe_adapter(o.adapter, CTS_PROBE_TIMEOUT_MS, &facts);
  if (!facts.loaded) {
    fprintf(stderr, "tsm-cts combos: %s: %s\n", o.adapter, facts.why);
    return 2;
  }
  int device = cts_adapter_device_index(&facts, o.device, "tsm-cts combos");
  if (device < 0) return 2;
  struct combo_known known = {0};
  if (o.known && combo_known_load(&known, o.known)) {
    fprintf(stderr, "tsm-cts combos: cannot use %s\n", o.known);
    combo_known_free(&known);
    return 2;
  }
  struct cts_spec spec = {0};
  int rc = 2;
  if (cts_spec_load(&spec, cts_spec_dir(o.spec)) == 0)
    rc = combos_run(&o, &facts, device, &spec, &known);
  else
    fprintf(stderr, "tsm-cts combos: cannot read the spec\n");
  cts_spec_free(&spec);
  combo_known_free(&known);
  return rc;
}
