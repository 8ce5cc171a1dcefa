/*
 * harness/tests/broken/far_element.c: the example adapter, but tensor_read of an f32
 * tensor of 2^21 elements or more returns element 1,234,567 one too large: a single wrong
 * element deep in a large tensor, which a judge that compared a sample of a large tensor
 * (every 32nd element at that size, and the last) would not see. The self-test (l) of
 * harness/tests/run_selftests.sh runs harness/tests/large with it: Fail, naming the
 * element; the example adapter itself passes.
 * clauses: [MGR.OP.7]
 */
#include <string.h>

#include "hostile.h"

#define FAR_ELEMENT 1234567

static int far_tensor_read(void *s, tsm_handle t, void *dst, size_t cap) {
  int rc = tsm_example_entry()->tensor_read(s, t, dst, cap);
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  if (rc == 0 && tsm_example_entry()->tensor_desc(s, t, &d) == 0 && d.dtype == TSM_F32 &&
      cap >= (size_t)(FAR_ELEMENT + 1) * sizeof(float) && cap >= ((size_t)1 << 21) * sizeof(float)) {
    float v;
    memcpy(&v, (char *)dst + (size_t)FAR_ELEMENT * sizeof v, sizeof v);
    v += 1;
    memcpy((char *)dst + (size_t)FAR_ELEMENT * sizeof v, &v, sizeof v);
  }
  return rc;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  static struct tsm_adapter broken;
  broken = *tsm_example_entry();
  broken.name = "broken_far_element";
  broken.tensor_read = far_tensor_read;
  return &broken;
}
