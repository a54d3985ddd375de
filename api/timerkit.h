/* timerkit: one executor, many timer engines. Include this header. */
#ifndef TIMERKIT_H
#define TIMERKIT_H

#include "timerkit/alloc.h"
#include "timerkit/clock.h"
#include "timerkit/engine.h"
#include "timerkit/executor.h"
#include "timerkit/export.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define TIMERKIT_VERSION_MAJOR 0
#define TIMERKIT_VERSION_MINOR 2
#define TIMERKIT_VERSION_PATCH 0

#endif
