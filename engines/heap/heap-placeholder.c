/* Placeholder until the heap engine lands: an ops table with no operations. */
#include "timerkit/queue.h"
static const tk_queue_ops ops = {.name = "heap"};
const tk_queue_ops *tk_engine_heap(void) { return &ops; }
