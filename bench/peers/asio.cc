/* SPDX-License-Identifier: MIT */
// tkbench: standalone asio's timers (Debian libasio-dev 1.22, header-only) as a
// baseline: the one peer written in C++, exposing its two tables to the rest
// of tkbench through a C interface (tkbench.h), as harness/gbench_shim.cc does
// for Google Benchmark.
//
// An io_context keeps the timers of one clock in a binary heap of (deadline,
// timer) pairs (detail/timer_queue.hpp), each timer holding its index in the
// heap and its own queue of pending waits: expires_at() and async_wait() put a
// timer in the heap in O(log n), cancel() takes it out in O(log n) and
// completes each of its waits with operation_aborted, a handler run by the
// io_context later like any other. A deadline that becomes the earliest
// re-arms the reactor's timerfd (one system call).
//
// Core level: an io_context with ASIO_CONCURRENCY_HINT_UNSAFE (no locking, as
// libevent's peer uses EVENT_BASE_FLAG_NOLOCK), driven from the benchmark's
// thread, never run but to hand out work: poll() after every 1024 cancels (and
// at the end of a batch) runs the aborted handlers, so a cancel's cost includes
// its completion. Virtual time comes from asio itself: the timers are
// asio::basic_waitable_timer, the template asio::steady_timer is an alias of,
// over a clock of ours whose now() is the virtual time (asio takes any clock).
// The heap, the per-timer wait queues and the reactor's work are
// asio::steady_timer's, the timerfd re-armed by the virtual time left
// whenever a deadline becomes the earliest; expiry (expire_all()) is exact in
// virtual time. No core-level replay: an io_context cannot be asked for its
// next deadline.
//
// Executor level: asio::steady_timer on an io_context (concurrency hint 1)
// run by a thread of ours. A timer object is not thread-safe, so user threads
// hand every operation to that thread with asio::post(), as asio intends
// (asio's own locked queue and wake-up: the counterpart of libuv's peer's
// queue and uv_async_send()). A schedule is expires_at() and async_wait() on
// that thread; asio takes absolute deadlines, so schedule_at() is there. A
// cancel is cancel(): a handler the reactor had already made ready before the
// cancel was applied is told apart by a sequence number and does not call the
// record, as careful asio code does.
// GCC 12 warns, under ThreadSanitizer, that it does not model the
// std::atomic_thread_fence() asio places around every handler
// (detail/std_fenced_block.hpp); the handlers' hand-offs go through asio's
// mutex, which it does model. The warning would fail the TSan pass's -Werror.
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#include <asio/basic_waitable_timer.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/version.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <new>
#include <thread>

extern "C" {
#include "tkbench.h"
}

namespace {

// ---- core --------------------------------------------------------------------
// The virtual clock. One core instance runs at a time (the harness opens one
// per case, on one thread); create() sets it to 0.
int64_t g_vnow_ns;

struct vclock {
    using duration = std::chrono::nanoseconds;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<vclock>;
    [[maybe_unused]] static constexpr bool is_steady = true;
    static time_point now() noexcept {
        return time_point(duration(g_vnow_ns));
    }
};

using vtimer = asio::basic_waitable_timer<vclock>;

constexpr size_t DRAIN_EVERY = 1024;

struct acore {
    asio::io_context io{ASIO_CONCURRENCY_HINT_UNSAFE};
    vtimer sentinel{io}; // expire_all(): due before every timer
    size_t fired = 0;
    vtimer *timers = nullptr; // constructed in prepare(), destroyed in destroy()
    size_t count = 0;
};

struct core_handler {
    acore *s;
    void operator()(const std::error_code &ec) const {
        if (!ec)
            s->fired++;
    }
};

// Runs the handlers the io_context has ready: the aborted waits of cancels,
// and the timers due by the virtual time.
inline void core_poll(acore *s) {
    s->io.restart(); // poll() stops the io_context once it runs out of work
    s->io.poll();
}

inline vtimer *vtimers(char *timers) {
    return std::launder(reinterpret_cast<vtimer *>(timers));
}

inline vclock::time_point vtp(int64_t ns) {
    return vclock::time_point(vclock::duration(ns));
}

int core_create(const tkb_peer *p, size_t n_hint, void **out) {
    (void)p;
    (void)n_hint;
    try {
        g_vnow_ns = 0;
        *out = new acore;
        return 0;
    } catch (...) {
        return -1;
    }
}

void core_destroy(void *self) {
    acore *s = static_cast<acore *>(self);
    for (size_t i = 0; i < s->count; i++)
        std::destroy_at(&s->timers[i]);
    delete s; // the io_context destroys the handlers still queued, unrun
}

void core_prepare(void *self, char *timers, size_t count) {
    acore *s = static_cast<acore *>(self);
    for (size_t i = 0; i < count; i++)
        new (timers + i * sizeof(vtimer)) vtimer(s->io);
    s->timers = vtimers(timers);
    s->count = count;
}

void core_add_range(void *self, char *timers, size_t i0, size_t i1, const int64_t *dl) {
    acore *s = static_cast<acore *>(self);
    vtimer *t = vtimers(timers);
    for (size_t i = i0; i < i1; i++) {
        t[i].expires_at(vtp(dl[i]));
        t[i].async_wait(core_handler{s});
    }
}

void core_cancel_list(void *self, char *timers, const uint32_t *idx, size_t count) {
    acore *s = static_cast<acore *>(self);
    vtimer *t = vtimers(timers);
    for (size_t k = 0; k < count; k++) {
        t[idx[k]].cancel();
        if ((k + 1) % DRAIN_EVERY == 0)
            core_poll(s);
    }
    core_poll(s);
}

// A pair is how asio re-arms a timer: expires_at() cancels the pending wait
// (its handler completes with operation_aborted), then a new async_wait().
void core_churn(void *self, char *timers, const uint32_t *idx, const int64_t *dl, size_t count) {
    acore *s = static_cast<acore *>(self);
    vtimer *t = vtimers(timers);
    for (size_t k = 0; k < count; k++) {
        vtimer &x = t[idx[k]];
        x.expires_at(vtp(dl[k]));
        x.async_wait(core_handler{s});
        if ((k + 1) % DRAIN_EVERY == 0)
            core_poll(s);
    }
    core_poll(s);
}

// The reactor compares the heap with the clock only when its timerfd fires,
// and the timerfd runs on the real clock: a wait on the sentinel, due at the
// beginning of time, is the earliest, so it re-arms the timerfd to fire at
// once (as any earliest deadline re-arms it); run_one() waits for that, the
// reactor hands out everything due by the virtual time, the sentinel's
// handler first, and poll() runs the others.
size_t core_expire_all(void *self, int64_t until_ns) {
    acore *s = static_cast<acore *>(self);
    s->fired = 0;
    if (until_ns > g_vnow_ns)
        g_vnow_ns = until_ns;
    bool reached = false;
    s->sentinel.expires_at(vtp(INT64_MIN / 2));
    s->sentinel.async_wait([&reached](const std::error_code &) { reached = true; });
    s->io.restart();
    while (!reached)
        s->io.run_one();
    s->io.poll();
    return s->fired;
}

// ---- service: a thread running the io_context, fed with asio::post() -------
struct aglue {
    // the timer, constructed in place by the io_context's thread at the first
    // schedule (the user's storage arrives zeroed), destroyed at release()
    alignas(asio::steady_timer) unsigned char tbuf[sizeof(asio::steady_timer)];
    tkb_fire *f;  // io_context thread only
    uint32_t seq; // io_context thread only: which wait may call f
    bool inited;  // io_context thread only
    bool owned;   // allocated by us (fire-and-forget): freed when it fires
    asio::steady_timer &timer() {
        return *std::launder(reinterpret_cast<asio::steady_timer *>(tbuf));
    }
};

// A fire-and-forget timer: the io_context's thread keeps them in a list, to
// free those still pending when the service is destroyed.
struct aowned {
    aglue g; // first: handlers reach it from the glue
    aowned *prev, *next;
};

struct asvc {
    asio::io_context io{1};
    asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
    std::thread thread;
    int64_t slack = -1;
    aowned *owned = nullptr; // io_context thread only
};

void owned_link(asvc *s, aowned *o) {
    o->prev = nullptr;
    o->next = s->owned;
    if (s->owned != nullptr)
        s->owned->prev = o;
    s->owned = o;
}

void owned_free(asvc *s, aowned *o) {
    if (o->prev != nullptr)
        o->prev->next = o->next;
    else
        s->owned = o->next;
    if (o->next != nullptr)
        o->next->prev = o->prev;
    if (o->g.inited)
        std::destroy_at(&o->g.timer());
    delete o;
}

// The wait's completion. An aborted wait (cancel, a new expires_at, release)
// touches nothing: the storage may be gone by then.
struct svc_handler {
    asvc *s;
    aglue *g;
    uint32_t seq;
    void operator()(const std::error_code &ec) const {
        if (ec || g->seq != seq)
            return;
        tkb_fire *f = g->f;
        if (g->owned)
            owned_free(s, reinterpret_cast<aowned *>(g));
        f->fn(f);
    }
};

void svc_start(asvc *s, aglue *g, tkb_fire *f, int64_t deadline_ns) {
    if (!g->inited) {
        new (g->tbuf) asio::steady_timer(s->io);
        g->inited = true;
        if (g->owned)
            owned_link(s, reinterpret_cast<aowned *>(g));
    }
    g->f = f;
    asio::steady_timer &t = g->timer();
    t.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline_ns)));
    t.async_wait(svc_handler{s, g, ++g->seq});
}

int svc_create(const tkb_peer *p, const tkb_svc_opts *o, void **out) {
    (void)p;
    asvc *s = nullptr;
    try {
        s = new asvc;
        s->slack = o->timer_slack_ns;
        s->thread = std::thread([s] {
            tkb_set_timer_slack(s->slack);
            s->io.run();
        });
    } catch (...) {
        delete s;
        return -1;
    }
    *out = s;
    return 0;
}

void svc_destroy(void *self) {
    asvc *s = static_cast<asvc *>(self);
    try {
        asio::post(s->io, [s] {
            while (s->owned != nullptr)
                owned_free(s, s->owned);
            s->io.stop();
        });
    } catch (...) {
        s->io.stop();
    }
    s->thread.join();
    // The timers in the user's storage are left as they are (their storage is
    // zeroed or freed by the caller, as for the other baselines); the
    // io_context's shutdown takes their waits out of them and destroys the
    // handlers still queued, unrun.
    delete s;
}

int svc_schedule_at(void *self, void *timer, tkb_fire *f, int64_t deadline_ns) {
    asvc *s = static_cast<asvc *>(self);
    aglue *g = static_cast<aglue *>(timer);
    try {
        if (g == nullptr) {
            aowned *o = new aowned();
            g = &o->g;
            g->owned = true;
        }
        asio::post(s->io, [s, g, f, deadline_ns] { svc_start(s, g, f, deadline_ns); });
    } catch (...) {
        if (timer == nullptr)
            delete reinterpret_cast<aowned *>(g);
        return -1;
    }
    return 0;
}

int svc_schedule(void *self, void *timer, tkb_fire *f, int64_t delay_ns) {
    return svc_schedule_at(self, timer, f, tkb_now_ns() + (delay_ns < 0 ? 0 : delay_ns));
}

// Posting can only fail for memory: the benchmark harness ends the run then.
template <typename F> void post_or_abort(asvc *s, F &&fn) {
    try {
        asio::post(s->io, std::forward<F>(fn));
    } catch (...) {
        abort();
    }
}

int svc_cancel(void *self, void *timer) {
    aglue *g = static_cast<aglue *>(timer);
    post_or_abort(static_cast<asvc *>(self), [g] {
        g->seq++; // a wait already made ready no longer calls the record
        if (g->inited)
            g->timer().cancel();
    });
    return 0;
}

void svc_release(void *self, void *timer) {
    aglue *g = static_cast<aglue *>(timer);
    post_or_abort(static_cast<asvc *>(self), [g] {
        if (g->inited) {
            std::destroy_at(&g->timer());
            g->inited = false;
        }
    });
}

void svc_sync_round(asvc *s) {
    std::promise<void> done;
    std::future<void> f = done.get_future();
    post_or_abort(s, [&done] { done.set_value(); });
    f.wait();
}

// Two rounds: a wait the reactor made ready before a release was applied can
// be queued behind the first round's marker (the reactor queues what it finds
// ready after the handlers queued before it), never behind the second's.
void svc_sync(void *self) {
    asvc *s = static_cast<asvc *>(self);
    svc_sync_round(s);
    svc_sync_round(s);
}

// The tables, filled field by field (C++17 has no designated initialisers).
tkb_core_peer_ops core_ops() {
    tkb_core_peer_ops o{};
    o.timer_size = sizeof(vtimer);
    o.can_expire = true;
    o.create = core_create;
    o.destroy = core_destroy;
    o.prepare = core_prepare;
    o.add_range = core_add_range;
    o.cancel_list = core_cancel_list;
    o.churn = core_churn;
    o.expire_all = core_expire_all;
    return o;
}

tkb_svc_ops svc_ops() {
    tkb_svc_ops o{};
    o.timer_size = sizeof(aglue);
    o.create = svc_create;
    o.destroy = svc_destroy;
    o.schedule = svc_schedule;
    o.schedule_at = svc_schedule_at;
    o.cancel = svc_cancel;
    o.release = svc_release;
    o.sync = svc_sync;
    return o;
}

} // namespace

extern "C" {

const tkb_core_peer_ops tkb_core_asio = core_ops();
const tkb_svc_ops tkb_svc_asio = svc_ops();

/* "1.22.1", from ASIO_VERSION (102201) */
const char *tkb_asio_version(void) {
    static char v[32];
    if (v[0] == '\0')
        snprintf(v, sizeof v, "%d.%d.%d", ASIO_VERSION / 100000, ASIO_VERSION / 100 % 1000,
                 ASIO_VERSION % 100);
    return v;
}

} // extern "C"
