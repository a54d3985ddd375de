/* Placeholder until the wheel engine lands: an ops table with no operations. */
#include "timerkit/queue.h"
static const tk_queue_ops ops = {.name = "wheel"};
const tk_queue_ops *tk_engine_wheel(void) { return &ops; }
