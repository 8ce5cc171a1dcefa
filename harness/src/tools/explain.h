/*
 * harness/src/tools/explain.h: `tsm-cts explain` (explain.c), the model's view after every
 * statement of a case.
 */
#ifndef CTS_EXPLAIN_H
#define CTS_EXPLAIN_H

int cts_explain_main(int argc, char **argv);

#endif
