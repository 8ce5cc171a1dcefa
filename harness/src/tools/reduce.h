/*
 * harness/src/tools/reduce.h: `tsm-cts reduce FILE --adapter SO`, shrinking a failing case by
 * delta debugging while it keeps failing the same way (reduce.c).
 */
#ifndef CTS_REDUCE_H
#define CTS_REDUCE_H

/* `tsm-cts reduce` with its own arguments (argv[0] is "reduce"). RETURN the exit status:
 * 0 when a reduced case was written, 1 when FILE does not fail, 2 on a usage or parse
 * error. */
int cts_reduce_main(int argc, char **argv);

#endif
