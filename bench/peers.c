/* tkbench: the peer table. Optional baselines (libuv, libevent) may be
 * missing from a build (CMake says so); the engines and executor always exist. */
#include <string.h>

#include "tkbench.h"

#define MS INT64_C(1000000)

#if TKB_HAVE_LIBUV
#define UV_CORE &tkb_core_libuv
#define UV_SVC &tkb_svc_libuv
#define UV_MISSING NULL
#else
#define UV_CORE NULL
#define UV_SVC NULL
#define UV_MISSING "libuv not found at configure time"
#endif
#if TKB_HAVE_LIBEVENT
#define EV_CORE &tkb_core_libevent
#define EV_SVC &tkb_svc_libevent
#define EV_MISSING NULL
#else
#define EV_CORE NULL
#define EV_SVC NULL
#define EV_MISSING "libevent not found at configure time"
#endif

tkb_peer tkb_peers[] = {
    {.name = "heap",
     .kind = "engine",
     .params = "4-ary indexed heap (engines/heap)",
     .engine = "heap",
     .core = &tkb_core_heap,
     .svc = &tkb_svc_executor},
    /* The heap with its documented spin option: the leader busy-waits the
     * last 150 us before a deadline instead of sleeping through the OS's
     * wake-up latency (about 60-100 us on the development VM). It only
     * changes waiting, so it runs in the latency and idle workloads. */
    {.name = "heap-spin150us",
     .kind = "engine",
     .params = "4-ary indexed heap, leader spins the last 150 us (spin_ns)",
     .engine = "heap",
     .spin_ns = 150000,
     .only = "W3_latency,W4_idle",
     .svc = &tkb_svc_executor},
    /* The same spin option on the 1 ms wheel's tick thread, whose wake-up
     * latency adds to the up to one tick a timer waits for its tick. */
    {.name = "wheel-1ms-1024-spin150us",
     .kind = "engine",
     .params = "hashed wheel, tick 1 ms, 1024 ticks, tick thread spins the last 150 us (spin_ns)",
     .tick_ns = 1 * MS,
     .ticks = 1024,
     .engine = "wheel",
     .spin_ns = 150000,
     .only = "W3_latency,W4_idle",
     .svc = &tkb_svc_executor},
    {.name = "wheel-1ms-1024",
     .kind = "engine",
     .params = "hashed wheel, tick 1 ms, 1024 ticks",
     .tick_ns = 1 * MS,
     .ticks = 1024,
     .engine = "wheel",
     .core = &tkb_core_wheel,
     .svc = &tkb_svc_executor},
    {.name = "wheel-100ms-512",
     .kind = "engine",
     .params = "hashed wheel, tick 100 ms, 512 ticks",
     .tick_ns = 100 * MS,
     .ticks = 512,
     .engine = "wheel",
     .core = &tkb_core_wheel,
     .svc = &tkb_svc_executor},
    /* The executor's embedded timers (tk_timer in the caller's memory, no
     * allocation per start; peer-executor-timer.c) on the engines and
     * parameters of heap, wheel-1ms-1024 and wheel-100ms-512. Executor level
     * only (their core level would be those peers' again). */
    {.name = "heap-embedded",
     .kind = "engine",
     .params = "4-ary indexed heap, embedded tk_timer (64 B, caller's memory)",
     .engine = "heap",
     .svc = &tkb_svc_executor_timer},
    {.name = "wheel-1ms-1024-embedded",
     .kind = "engine",
     .params = "hashed wheel, tick 1 ms, 1024 ticks, embedded tk_timer (64 B, caller's memory)",
     .tick_ns = 1 * MS,
     .ticks = 1024,
     .engine = "wheel",
     .svc = &tkb_svc_executor_timer_wheel},
    {.name = "wheel-100ms-512-embedded",
     .kind = "engine",
     .params = "hashed wheel, tick 100 ms, 512 ticks, embedded tk_timer (64 B, caller's memory)",
     .tick_ns = 100 * MS,
     .ticks = 512,
     .engine = "wheel",
     .svc = &tkb_svc_executor_timer_wheel},
    {.name = "libuv",
     .kind = "baseline",
     .params = "uv_timer_start/stop (Debian libuv1)",
     .core = UV_CORE,
     .svc = UV_SVC,
     .missing = UV_MISSING},
    {.name = "libevent",
     .kind = "baseline",
     .params = "evtimer_add/del (Debian libevent 2.1, default base)",
     .core = EV_CORE,
     .svc = EV_SVC,
     .missing = EV_MISSING},
    {.name = "naive-heap",
     .kind = "strawman",
     .params = "binary heap, no index: linear-search cancel",
     .core = &tkb_core_naive_heap,
     .core_max_n = 100000},
    {.name = "sorted-list",
     .kind = "strawman",
     .params = "sorted doubly linked list",
     .core = &tkb_core_sorted_list,
     .core_max_n = 10000},
    {.name = "floor", .kind = "floor", .params = "machine limits"},
};
const size_t tkb_peer_count = sizeof tkb_peers / sizeof tkb_peers[0];

const tkb_peer *tkb_peer_find(const char *name) {
    for (size_t i = 0; i < tkb_peer_count; i++)
        if (strcmp(tkb_peers[i].name, name) == 0)
            return &tkb_peers[i];
    return NULL;
}
