/* SPDX-License-Identifier: MIT */
/* timerkit reliability: stress with exact accounting, on every engine.
 *
 * Mixed load. Producer threads schedule one-shot and periodic tasks with
 * random delays (negative, zero, up to 20 ms) and cancel some of them at
 * random moments, racing the workers that run them. Each task has a record;
 * the task body, arg_free and shutdown_now's drop callback only count into
 * it. After an orderly shutdown and termination every record is checked:
 *   - a task whose cancel returned TK_OK never ran; every other one-shot ran
 *     exactly once; arg_free ran exactly once for every task;
 *   - no run started before its deadline: start >= now-before-scheduling +
 *     delay (+ k * period for run k of a fixed-rate task; >= previous end +
 *     delay for fixed delay), measured with tk_clock_now_ns();
 *   - runs of a periodic task never overlapped, and their number lies in
 *     [expected - lateness tolerance, exact upper bound];
 *   - the executor's counters agree (runs, accepted_count, rejected, failed,
 *     queue and pool empty, cancelled within its possible range), and the
 *     identities between the counters documented at tk_executor_stats hold
 *     exactly: once the producers are done (polled for: the workers go on
 *     with periodic tasks, so the counters hold still only between two of
 *     their steps) and at termination (at once).
 *
 * Run-time control. One mixed-load round per engine also changes the core
 * pool size (0 to 4), the keep-alive (1 to 20 ms) and core thread time-out
 * at random while the producers run, so workers time out and start again
 * under load; the same accounting must hold.
 *
 * Shutdown races. Producers keep scheduling (and cancelling) while the test
 * thread calls shutdown() (with and without execute_delayed_after_shutdown)
 * or shutdown_now(). Nothing may be lost: each task ran, was handed back by
 * shutdown_now (exactly once, its arg not freed), was dropped by a shutdown
 * policy or a cancel (arg freed once, future cancelled), or was rejected with
 * a status (arg freed once); every future is done; the pool reaches
 * TERMINATED.
 *
 * Embedded timers. Producer threads each own a set of tk_timers and start,
 * stop and restart them at random (delays from 0 to 5 ms); a callback
 * restarts its own timer now and then, so starts race with stops, firings
 * and each other; the pool is shut down (shutdown() or shutdown_now()) while
 * they run. Per timer, every start that returned TK_OK ended exactly once:
 * it fired, a stop returned TK_OK for it, or the shutdown dropped it; in
 * aggregate the drops are what cancelled_count holds beyond the successful
 * stops. Every timer is idle at the end, and the counters (accepted_count,
 * runs, completed, rejected) agree, the identities exactly.
 *
 * The shutdown races check the identities at termination too, with
 * handed_back_count equal to what the drop callbacks saw.
 *
 * Blocked gets and aborts. Getter threads wait on futures while another
 * thread aborts their gets at random and a third runs invoke_any calls;
 * every get ends with the task's outcome (after any number of TK_EINTR),
 * every invoke_any with its winner: nothing waits for a lost wake-up.
 *
 * Sizes: CI-sized by default (a few seconds per engine); sanitizer builds
 * scale down by 8 on their own; TK_STRESS_SCALE multiplies; TK_SOAK_SECONDS
 * repeats the mixed load on every engine for that long. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel-common.h"

#define PRODUCERS 4
#define WORKERS 4
#define NOT_CANCELLED 1 /* cancel_rc of a task nobody cancelled */
#define NOT_SCHEDULED 2 /* sched_rc of a record never used */

enum kind { K_ONE_SHOT, K_FIXED_RATE, K_FIXED_DELAY };

typedef struct rec {
    /* Written by the producer before scheduling, read by the task. */
    int64_t min_deadline; /* tk_clock_now_ns() before scheduling + delay */
    int64_t period;
    enum kind kind;
    /* Written by the producer after the calls return; read after join. */
    int sched_rc;
    int64_t sched_end; /* when the scheduling call returned */
    int cancel_rc;
    int64_t cancel_begin, cancel_end;
    tk_future *future; /* kept until the end (shutdown races) */
    /* Written by tasks / callbacks. */
    atomic_int runs;
    atomic_int frees;
    atomic_int handed;
    atomic_int in_run;
    atomic_int overlap;
    atomic_int early;
    atomic_llong last_end; /* fixed delay: end of the previous run */
    atomic_llong worst_early_ns;
} rec;

/* Lateness of one-shot starts (start - earliest possible deadline), for the
 * report: the worst one and how many exceeded 10 ms. */
static atomic_llong worst_late_ns;
static atomic_long late_10ms;

static int t_rec(tk_run *run, void *arg) {
    rec *r = arg;
    int64_t now = tk_clock_now_ns();
    if (atomic_exchange(&r->in_run, 1) != 0)
        atomic_store(&r->overlap, 1);
    int k = atomic_load(&r->runs);
    int64_t bound = r->min_deadline;
    if (r->kind == K_FIXED_RATE)
        bound = r->min_deadline + (int64_t)k * r->period;
    else if (r->kind == K_FIXED_DELAY && k > 0)
        bound = (int64_t)atomic_load(&r->last_end) + r->period;
    if (now < bound) {
        atomic_fetch_add(&r->early, 1);
        atomic_store(&r->worst_early_ns, bound - now);
    } else if (r->kind == K_ONE_SHOT) {
        long long late = now - bound, w = atomic_load(&worst_late_ns);
        while (late > w && !atomic_compare_exchange_weak(&worst_late_ns, &w, late)) {
        }
        if (late > 10 * TK_NS_PER_MS)
            atomic_fetch_add(&late_10ms, 1);
    }
    (void)run;
    atomic_fetch_add(&r->runs, 1);
    atomic_store(&r->last_end, tk_clock_now_ns());
    atomic_store(&r->in_run, 0);
    return 0;
}

static void rec_free(void *arg) {
    atomic_fetch_add(&((rec *)arg)->frees, 1);
}

static void rec_drop(void *ctx, const tk_task_info *task, tk_arg_free_fn arg_free) {
    atomic_long *count = ctx;
    rec *r = task->arg;
    (void)arg_free;
    atomic_fetch_add(&r->handed, 1);
    atomic_fetch_add(count, 1);
}

/* ---- producers --------------------------------------------------------------------- */

typedef struct producer {
    tk_executor *ex;
    rec *recs; /* this producer's slice */
    long n;
    uint64_t seed;
    bool keep_futures; /* shutdown races: keep every future to check it */
    atomic_bool *stop; /* shutdown races: stop soon after rejections start */
    double rate;       /* tasks per second for this producer; 0: flat out */
    atomic_long used;  /* records used (read by the test thread to time the shutdown) */
    long rejected_seen;
} producer;

#define RING 64

static int64_t random_delay(uint64_t *s) {
    uint64_t x = rel_rand(s) % 100;
    if (x < 5)
        return -(int64_t)(rel_rand(s) % TK_NS_PER_MS) - 1; /* negative: now */
    if (x < 10)
        return 0;
    if (x < 70)
        return (int64_t)(rel_rand(s) % (2 * TK_NS_PER_MS));
    return (int64_t)(rel_rand(s) % (20 * TK_NS_PER_MS));
}

static void cancel_rec(rec *r, tk_future *f, uint64_t *s) {
    r->cancel_begin = tk_clock_now_ns();
    r->cancel_rc = tk_future_cancel(f, (rel_rand(s) & 1) != 0);
    r->cancel_end = tk_clock_now_ns();
}

static void *producer_main(void *p_) {
    producer *p = p_;
    struct {
        rec *r;
        tk_future *f;
        int64_t cancel_at; /* periodic tasks: when to cancel */
    } ring[RING];
    int nring = 0;
    uint64_t s = p->seed;
    int64_t t_start = tk_clock_now_ns();
    for (long i = 0; i < p->n; i++) {
        if (p->stop != NULL && atomic_load(p->stop))
            break;
        if (p->rate > 0 && (i & 63) == 0) {
            int64_t due = t_start + (int64_t)((double)i / p->rate * 1e9);
            rel_sleep_ns(due - tk_clock_now_ns());
        }
        rec *r = &p->recs[i];
        uint64_t roll = rel_rand(&s) % 1000;
        r->kind = roll < 4 ? K_FIXED_RATE : roll < 8 ? K_FIXED_DELAY : K_ONE_SHOT;
        r->period = r->kind == K_ONE_SHOT ? 0
                                          : (int64_t)(1 + rel_rand(&s) % 4) * TK_NS_PER_MS +
                                                (int64_t)(rel_rand(&s) % 1000);
        r->cancel_rc = NOT_CANCELLED;
        bool want_future = p->keep_futures || r->kind != K_ONE_SHOT || (rel_rand(&s) % 10) < 4;
        tk_task_spec spec;
        memset(&spec, 0, sizeof(spec));
        spec.fn = t_rec;
        spec.arg = r;
        spec.arg_free = rec_free;
        spec.kind = r->kind == K_ONE_SHOT     ? TK_TASK_ONE_SHOT
                    : r->kind == K_FIXED_RATE ? TK_TASK_FIXED_RATE
                                              : TK_TASK_FIXED_DELAY;
        spec.delay_ns = random_delay(&s);
        spec.period_ns = r->period;
        int64_t pre = tk_clock_now_ns();
        r->min_deadline = tk_deadline_after_ns(pre, spec.delay_ns);
        tk_future *f = NULL;
        r->sched_rc = tk_executor_schedule_spec(p->ex, &spec, want_future ? &f : NULL);
        r->sched_end = tk_clock_now_ns();
        atomic_store(&p->used, i + 1);
        if (r->sched_rc != TK_OK) {
            p->rejected_seen++;
            if (p->rejected_seen > 64 && p->stop != NULL)
                break;
            continue;
        }
        if (p->keep_futures)
            r->future = f;
        if (!want_future)
            continue;
        /* Periodic tasks live 20-80 ms; one-shots are cancelled (or not)
         * when they leave the ring, a few dozen schedules later. */
        int64_t cancel_at =
            r->kind == K_ONE_SHOT ? 0 : pre + (int64_t)(20 + rel_rand(&s) % 60) * TK_NS_PER_MS;
        if (nring == RING) {
            int victim = (int)(rel_rand(&s) % RING);
            int64_t now = tk_clock_now_ns();
            /* Only evict a periodic task once its time has come. */
            for (int tries = 0; tries < RING && ring[victim].cancel_at > now; tries++)
                victim = (victim + 1) % RING;
            if (ring[victim].cancel_at > now) {
                /* All periodic and not yet due: let this one go uncancelled. */
                if (!p->keep_futures)
                    tk_future_release(f);
                continue;
            }
            bool cancel = ring[victim].cancel_at != 0 || (rel_rand(&s) % 100) < 60;
            if (cancel)
                cancel_rec(ring[victim].r, ring[victim].f, &s);
            if (!p->keep_futures)
                tk_future_release(ring[victim].f);
            ring[victim] = ring[--nring];
        }
        ring[nring].r = r;
        ring[nring].f = f;
        ring[nring].cancel_at = cancel_at;
        nring++;
    }
    /* Cancel the periodic tasks still held (once due), release the rest. */
    for (int i = 0; i < nring; i++) {
        if (ring[i].cancel_at != 0) {
            int64_t wait = ring[i].cancel_at - tk_clock_now_ns();
            if (p->stop == NULL)
                rel_sleep_ns(wait);
            cancel_rec(ring[i].r, ring[i].f, &s);
        }
        if (!p->keep_futures)
            tk_future_release(ring[i].f);
    }
    return NULL;
}

/* ---- accounting ---------------------------------------------------------------------- */

typedef struct tally {
    long scheduled, rejected, cancelled_ok, cancelled_running, cancelled_done, periodic;
    long runs, handed, dropped;
    long lost, duplicated, early, overlap, bad_frees, periodic_out_of_range, not_done;
    long printed;
} tally;

static void bad_rec(tally *t, long i, const rec *r, const char *what) {
    if (t->printed++ < 12)
        print_error("  task %ld (kind %d, sched %s, cancel %s): %s; runs %d, frees %d, handed %d\n",
                    i, (int)r->kind, tk_status_name(r->sched_rc),
                    r->cancel_rc == NOT_CANCELLED ? "-" : tk_status_name(r->cancel_rc), what,
                    atomic_load(&r->runs), atomic_load(&r->frees), atomic_load(&r->handed));
}

enum ending { END_SHUTDOWN, END_SHUTDOWN_NO_DELAYED, END_SHUTDOWN_NOW };

/* end_begin: when shutdown started; end_time: after termination. */
static void account(rec *recs, long n, enum ending end, int64_t end_begin, int64_t end_time,
                    tally *t) {
    /* Lateness tolerance of the periodic lower bound: 60 ms (500 ms under a
     * sanitizer or valgrind), or twice the worst one-shot lateness of the round if the
     * machine was that loaded (the bound is about periodic tasks keeping up
     * with everything else, not about the machine). */
    int64_t tol = (rel_slowed() ? 500 : 60) * TK_NS_PER_MS;
    if (2 * (int64_t)atomic_load(&worst_late_ns) > tol)
        tol = 2 * (int64_t)atomic_load(&worst_late_ns);
    for (long i = 0; i < n; i++) {
        rec *r = &recs[i];
        if (r->sched_rc == NOT_SCHEDULED)
            continue;
        int runs = atomic_load(&r->runs), frees = atomic_load(&r->frees);
        int handed = atomic_load(&r->handed);
        t->runs += runs;
        if (atomic_load(&r->early)) {
            t->early++;
            char msg[96];
            snprintf(msg, sizeof(msg), "started %lld ns before its deadline",
                     (long long)atomic_load(&r->worst_early_ns));
            bad_rec(t, i, r, msg);
        }
        if (atomic_load(&r->overlap)) {
            t->overlap++;
            bad_rec(t, i, r, "periodic runs overlapped");
        }
        if (r->future != NULL && !tk_future_is_done(r->future)) {
            t->not_done++;
            bad_rec(t, i, r, "future not done after termination");
        }
        if (r->sched_rc != TK_OK) {
            t->rejected++;
            if (r->sched_rc != TK_EREJECTED || runs != 0 || handed != 0 || frees != 1) {
                t->lost++;
                bad_rec(t, i, r, "rejected task: want TK_EREJECTED, no run, arg freed once");
            }
            continue;
        }
        t->scheduled++;
        t->handed += handed;
        if (r->cancel_rc == TK_OK)
            t->cancelled_ok++;
        else if (r->cancel_rc == TK_ERUNNING)
            t->cancelled_running++;
        else if (r->cancel_rc == TK_EDONE)
            t->cancelled_done++;
        else if (r->cancel_rc != NOT_CANCELLED)
            bad_rec(t, i, r, "cancel returned an undocumented status");
        if (handed > 1 || frees > 1) {
            t->duplicated++;
            bad_rec(t, i, r, "handed back or freed more than once");
            continue;
        }
        if (frees + handed != 1) {
            t->lost++;
            bad_rec(t, i, r, "neither freed nor handed back exactly once");
            continue;
        }
        if (r->kind == K_ONE_SHOT) {
            if (runs > 1) {
                t->duplicated++;
                bad_rec(t, i, r, "one-shot ran more than once");
            } else if (r->cancel_rc == TK_OK && runs != 0) {
                t->duplicated++;
                bad_rec(t, i, r, "ran although cancel returned TK_OK");
            } else if (runs + handed > 1) {
                t->duplicated++;
                bad_rec(t, i, r, "ran and was handed back");
            } else if (runs == 0 && handed == 0 && r->cancel_rc != TK_OK) {
                /* Not run, not handed back, not cancelled by us: legal only if
                 * its future says cancelled, by the shutdown policy
                 * (execute_delayed_after_shutdown off) or, as in Java, because
                 * it was accepted while shutdown_now was running (it missed
                 * the drain). With execute_delayed_after_shutdown on, an
                 * accepted one-shot must run. */
                bool cancelled = r->future != NULL && tk_future_is_cancelled(r->future);
                /* With plain shutdown, a task whose scheduling call was still
                 * running when shutdown began may have lost the race as the
                 * JDK's delayedExecute() loses it: accepted, then the pool
                 * terminated (its queue empty, its workers gone) before the
                 * offer's re-check, which cancels it. Any other cancel is a
                 * loss. */
                bool raced = r->sched_end >= end_begin;
                if ((end == END_SHUTDOWN && !(cancelled && raced)) || !cancelled) {
                    t->lost++;
                    bad_rec(t, i, r, "never ran, never handed back, future not cancelled");
                } else {
                    t->dropped++;
                }
            } else if (runs != 1 && (r->cancel_rc == TK_ERUNNING ||
                                     (r->cancel_rc == TK_EDONE && r->cancel_end < end_begin))) {
                /* Before shutdown began, "done" can only mean "ran". */
                t->lost++;
                bad_rec(t, i, r, "cancel said running/done but it never ran");
            }
            continue;
        }
        /* Periodic. */
        t->periodic++;
        if (r->cancel_rc == TK_OK || r->cancel_rc == TK_ERUNNING) {
            /* Upper bound: no run starts before its deadline, and none after
             * cancel returned. */
            int64_t span = r->cancel_end - r->min_deadline;
            long hi = span < 0 ? 1 : (long)(span / r->period) + 1;
            long lo = 0;
            int64_t lspan = r->cancel_begin - r->min_deadline - tol;
            if (lspan > 0)
                lo = r->kind == K_FIXED_RATE ? (long)(lspan / r->period) + 1 : 1;
            if (runs > hi || runs < lo) {
                t->periodic_out_of_range++;
                char msg[96];
                snprintf(msg, sizeof(msg), "periodic ran %d times, want %ld..%ld", runs, lo, hi);
                bad_rec(t, i, r, msg);
            }
        } else if (end != END_SHUTDOWN_NOW || handed == 0) {
            /* Ended by the shutdown policy: bounded by the end of the test. */
            int64_t span = end_time - r->min_deadline;
            long hi = span < 0 ? 0 : (long)(span / r->period) + 1;
            if (runs > hi) {
                t->periodic_out_of_range++;
                bad_rec(t, i, r, "periodic ran past the end of the test");
            }
        }
    }
}

static void print_tally(const char *what, const char *engine, const tally *t, double secs) {
    print_message("  [%s] %s: one-shot lateness: worst %.2f ms, %ld starts later than 10 ms\n",
                  engine, what, (double)atomic_exchange(&worst_late_ns, 0) / 1e6,
                  atomic_exchange(&late_10ms, 0));
    print_message("  [%s] %s: %ld tasks (%ld periodic) in %.2f s, %ld runs, %ld rejected, %ld "
                  "cancelled (+%ld running, %ld done), %ld handed back, %ld dropped by shutdown | "
                  "lost %ld, duplicated %ld, early %ld, overlap %ld, periodic out of range %ld, "
                  "undone futures %ld\n",
                  engine, what, t->scheduled, t->periodic, secs, t->runs, t->rejected,
                  t->cancelled_ok, t->cancelled_running, t->cancelled_done, t->handed, t->dropped,
                  t->lost, t->duplicated, t->early, t->overlap, t->periodic_out_of_range,
                  t->not_done);
}

static void assert_clean(const tally *t) {
    assert_int_equal(t->lost, 0);
    assert_int_equal(t->duplicated, 0);
    assert_int_equal(t->early, 0);
    assert_int_equal(t->overlap, 0);
    assert_int_equal(t->periodic_out_of_range, 0);
    assert_int_equal(t->not_done, 0);
}

static rec *alloc_recs(long n) {
    rec *recs = calloc((size_t)n, sizeof(*recs));
    assert_non_null(recs);
    for (long i = 0; i < n; i++)
        recs[i].sched_rc = NOT_SCHEDULED;
    return recs;
}

static tk_executor *stress_executor(const tk_queue_ops *engine, bool remove_on_cancel,
                                    bool execute_delayed, unsigned workers) {
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, workers, NULL);
    opt.remove_on_cancel = remove_on_cancel;
    opt.execute_delayed_after_shutdown = execute_delayed;
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    return ex;
}

/* ---- agitator: pool control calls racing with the load --------------------------------- */

typedef struct agitator {
    tk_executor *ex;
    bool toggle_remove_on_cancel;
    bool control; /* also change the core size, keep-alive and core time-out */
    unsigned max_threads;
    uint64_t seed;
    atomic_bool stop;
    long iterations, purged, bad_purge, bad_stats, bad_prestart, bad_control;
    long empty_pool_seen; /* rounds that saw no worker alive */
} agitator;

static atomic_long control_threads_started;

static int counting_factory(void *ctx, pthread_t *thread, void *(*start)(void *), void *arg,
                            const char *name) {
    (void)ctx;
    (void)name;
    atomic_fetch_add(&control_threads_started, 1);
    return pthread_create(thread, NULL, start, arg);
}

/* Run-time control racing with the load: the core size (0 to max_threads),
 * the keep-alive (1 to 20 ms) and core thread time-out change at random, so
 * workers retire and start again while tasks flow. */
static void agitate_control(agitator *a) {
    uint64_t r = rel_rand(&a->seed);
    unsigned core = (unsigned)(r % (a->max_threads + 1));
    int64_t keep = (int64_t)(1 + (r >> 8) % 20) * TK_NS_PER_MS;
    if (tk_executor_set_core_pool_size(a->ex, core) != TK_OK ||
        tk_executor_set_keep_alive(a->ex, keep) != TK_OK ||
        tk_executor_allow_core_thread_timeout(a->ex, ((r >> 16) & 3) != 0) != TK_OK ||
        tk_executor_get_core_pool_size(a->ex) > a->max_threads)
        a->bad_control++;
}

static void *agitator_main(void *a_) {
    agitator *a = a_;
    while (!atomic_load(&a->stop)) {
        long n = tk_executor_purge(a->ex);
        if (n < 0)
            a->bad_purge++;
        else
            a->purged += n;
        tk_executor_stats st;
        if (tk_executor_stats_get(a->ex, &st) != TK_OK || st.pool_size > a->max_threads ||
            st.active_count > a->max_threads || st.largest_pool_size > a->max_threads)
            a->bad_stats++;
        else if (st.pool_size == 0)
            a->empty_pool_seen++;
        if (a->toggle_remove_on_cancel)
            tk_executor_set_remove_on_cancel(a->ex, (a->iterations & 1) != 0);
        if ((a->iterations & 15) == 0 && tk_executor_prestart_core_thread(a->ex) < 0)
            a->bad_prestart++;
        if (a->control && (a->iterations & 7) == 0)
            agitate_control(a);
        a->iterations++;
        rel_sleep_ns(200 * TK_NS_PER_US);
    }
    return NULL;
}

/* ---- the counters' identities (tk_executor_stats) --------------------------------------- */

static bool identities_hold(const tk_executor_stats *s) {
    return s->task_count == s->completed_count + s->active_count + s->queue_size &&
           s->accepted_count + s->requeued_count == s->completed_count + s->active_count +
                                                        s->queue_size + s->removed_count +
                                                        s->handed_back_count;
}

static void print_identities(const char *where, const tk_executor_stats *s) {
    print_message("  %s: accepted %llu + requeued %llu vs completed %llu + active %u + "
                  "queued %zu + removed %llu + handed back %llu; task count %llu\n",
                  where, (unsigned long long)s->accepted_count,
                  (unsigned long long)s->requeued_count, (unsigned long long)s->completed_count,
                  s->active_count, s->queue_size, (unsigned long long)s->removed_count,
                  (unsigned long long)s->handed_back_count, (unsigned long long)s->task_count);
}

/* At termination nothing moves: the identities hold at once, with nothing
 * running or queued. */
static void assert_identities_terminated(const char *where, const tk_executor_stats *s) {
    if (!identities_hold(s) || s->queue_size != 0 || s->active_count != 0)
        print_identities(where, s);
    assert_true(identities_hold(s));
    assert_int_equal(s->queue_size, 0);
    assert_int_equal(s->task_count, s->completed_count);
}

/* While workers may still be between two steps of a run (taking, counting,
 * re-queuing), the counters read one by one can be off by the entries in
 * transit: poll until one reading shows the identities exact. */
static void assert_identities_soon(tk_executor *ex, const char *where) {
    int64_t end = tk_clock_now_ns() + 20 * TK_NS_PER_S;
    tk_executor_stats st;
    for (;;) {
        assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
        if (identities_hold(&st))
            return;
        if (tk_clock_now_ns() >= end)
            break;
        rel_sleep_ns(20 * TK_NS_PER_US);
    }
    print_identities(where, &st);
    fail_msg("%s: the counters' identities never held", where);
}

/* ---- mixed load ---------------------------------------------------------------------- */

static void mixed_round(const tk_queue_ops *engine, long total, uint64_t seed,
                        bool remove_on_cancel, unsigned workers, bool control) {
    rec *recs = alloc_recs(total);
    tk_executor *ex = stress_executor(engine, remove_on_cancel, true, workers);
    unsigned max_threads = workers == 0 ? 1 : workers;
    if (control) {
        atomic_store(&control_threads_started, 0);
        assert_int_equal(tk_executor_set_thread_factory(ex, counting_factory, NULL), TK_OK);
        assert_int_equal(tk_executor_set_keep_alive(ex, TK_NS_PER_MS), TK_OK);
        assert_int_equal(tk_executor_allow_core_thread_timeout(ex, true), TK_OK);
    }
    producer prod[PRODUCERS];
    pthread_t th[PRODUCERS];
    long per = total / PRODUCERS;
    int64_t t0 = tk_clock_now_ns();
    agitator ag;
    memset(&ag, 0, sizeof(ag));
    ag.ex = ex;
    ag.max_threads = max_threads;
    ag.toggle_remove_on_cancel = remove_on_cancel;
    ag.control = control;
    ag.seed = seed * 31 + 7;
    pthread_t ag_th;
    assert_int_equal(pthread_create(&ag_th, NULL, agitator_main, &ag), 0);
    for (int i = 0; i < PRODUCERS; i++) {
        prod[i] = (producer){.ex = ex,
                             .recs = recs + i * per,
                             .n = per,
                             .seed = seed * 7919 + (uint64_t)i + 1,
                             .rate = (double)rel_scaled(100000) / PRODUCERS};
        assert_int_equal(pthread_create(&th[i], NULL, producer_main, &prod[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    atomic_store(&ag.stop, true);
    assert_int_equal(pthread_join(ag_th, NULL), 0);
    print_message("  [%s] agitator: %ld rounds of purge/stats/prestart%s%s, %ld purged, "
                  "%ld saw no thread\n",
                  engine->name, ag.iterations, remove_on_cancel ? "/toggle remove_on_cancel" : "",
                  control ? "/core size, keep-alive, core time-out" : "", ag.purged,
                  ag.empty_pool_seen);
    if (control)
        print_message("  [%s] run-time control: %ld threads started in all\n", engine->name,
                      atomic_load(&control_threads_started));
    assert_int_equal(ag.bad_control, 0);
    assert_int_equal(ag.bad_purge, 0);
    assert_int_equal(ag.bad_stats, 0);
    assert_int_equal(ag.bad_prestart, 0);
    assert_identities_soon(ex, "mixed load, producers done");
    int64_t t_end = tk_clock_now_ns();
    assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    assert_int_equal(tk_executor_await_termination(ex, 60 * TK_NS_PER_S), TK_OK);
    int64_t t1 = tk_clock_now_ns();
    assert_int_equal(tk_executor_state(ex), TK_POOL_TERMINATED);

    tally t;
    memset(&t, 0, sizeof(t));
    account(recs, per * PRODUCERS, END_SHUTDOWN, t_end, t1, &t);
    char what[96];
    snprintf(what, sizeof(what), "mixed load (%u threads%s, remove_on_cancel=%d)", workers,
             control ? " changing at run time" : "", remove_on_cancel);
    print_tally(what, engine->name, &t, (double)(t1 - t0) / 1e9);

    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);
    assert_clean(&t);
    assert_int_equal(t.rejected, 0);
    assert_int_equal(st.runs, (uint64_t)t.runs);
    assert_int_equal(st.accepted_count, (uint64_t)t.scheduled);
    assert_identities_terminated("mixed load, terminated", &st);
    assert_int_equal(st.handed_back_count, 0);
    assert_int_equal(st.rejected_count, 0);
    assert_int_equal(st.failed_count, 0);
    assert_int_equal(st.failed_periodic_count, 0);
    assert_int_equal(st.queue_size, 0);
    assert_int_equal(st.pool_size, 0);
    assert_int_equal(st.active_count, 0);
    assert_true(st.largest_pool_size >= 1 && st.largest_pool_size <= max_threads);
    assert_true(st.runs <= st.completed_count); /* the rest: dropped when cancelled */
    /* Cancelled: at least the TK_OK cancels; at most those plus the
     * cancelled-while-running ones and the periodic tasks shutdown ended. */
    assert_true(st.cancelled_count >= (uint64_t)t.cancelled_ok);
    assert_true(st.cancelled_count <=
                (uint64_t)(t.cancelled_ok + t.cancelled_running + t.periodic));
    free(recs);
}

static void test_mixed_load_exact_accounting(void **state) {
    (void)state;
    long total = rel_scaled(200000);
    double soak = rel_soak_seconds();
    int64_t soak_end = tk_clock_now_ns() + (int64_t)(soak * 1e9);
    uint64_t seed = 1;
    do {
        for (size_t e = 0; e < tk_engine_count(); e++) {
            mixed_round(tk_engine_at(e), total, seed, false, WORKERS, false);
            mixed_round(tk_engine_at(e), total / 2, seed + 1000, true, WORKERS, false);
            /* core_pool_size 0: one thread still starts when work arrives. */
            mixed_round(tk_engine_at(e), total / 8, seed + 2000, false, 0, false);
            /* The core size, keep-alive and core time-out change while tasks flow:
             * workers retire (down to none) and start again; nothing is lost. */
            mixed_round(tk_engine_at(e), total / 4, seed + 3000, true, WORKERS, true);
            seed++;
        }
    } while (soak > 0 && tk_clock_now_ns() < soak_end);
}

/* ---- shutdown races ---------------------------------------------------------------------- */

typedef struct second_stop {
    tk_executor *ex;
    atomic_long *handed_cb;
    atomic_bool go;
    long handed;
} second_stop;

static void *second_shutdown_now(void *p) {
    second_stop *s = p;
    while (!atomic_load(&s->go)) {
    }
    s->handed = tk_executor_shutdown_now(s->ex, rec_drop, s->handed_cb);
    return NULL;
}

static void shutdown_race(const tk_queue_ops *engine, enum ending end, bool remove_on_cancel,
                          long total, uint64_t seed, unsigned workers) {
    static const char *const names[3] = {"shutdown", "shutdown (no delayed)", "shutdown_now"};
    rec *recs = alloc_recs(total);
    tk_executor *ex =
        stress_executor(engine, remove_on_cancel, end != END_SHUTDOWN_NO_DELAYED, workers);
    producer prod[PRODUCERS];
    pthread_t th[PRODUCERS];
    atomic_bool stop = false;
    long per = total / PRODUCERS;
    for (int i = 0; i < PRODUCERS; i++) {
        prod[i] = (producer){.ex = ex,
                             .recs = recs + i * per,
                             .n = per,
                             .seed = seed * 104729 + (uint64_t)i,
                             .keep_futures = true,
                             .stop = &stop};
        assert_int_equal(pthread_create(&th[i], NULL, producer_main, &prod[i]), 0);
    }
    /* Let the producers get half way, then pull the rug. */
    int64_t t_start = tk_clock_now_ns();
    for (;;) {
        long used = 0;
        for (int i = 0; i < PRODUCERS; i++)
            used += atomic_load(&prod[i].used);
        if (used >= total / 2 || tk_clock_now_ns() - t_start > 10 * TK_NS_PER_S)
            break;
        rel_sleep_ns(50 * TK_NS_PER_US);
    }
    atomic_long handed_cb = 0;
    long handed = 0;
    int64_t t_end = tk_clock_now_ns();
    if (end == END_SHUTDOWN_NOW) {
        /* Two threads call shutdown_now at once: each task comes back once. */
        second_stop ss = {.ex = ex, .handed_cb = &handed_cb};
        pthread_t sth;
        assert_int_equal(pthread_create(&sth, NULL, second_shutdown_now, &ss), 0);
        atomic_store(&ss.go, true);
        handed = tk_executor_shutdown_now(ex, rec_drop, &handed_cb);
        assert_int_equal(pthread_join(sth, NULL), 0);
        assert_true(handed >= 0);
        assert_true(ss.handed >= 0);
        handed += ss.handed;
    } else {
        assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    }
    assert_int_equal(tk_executor_await_termination(ex, 60 * TK_NS_PER_S), TK_OK);
    assert_int_equal(tk_executor_state(ex), TK_POOL_TERMINATED);
    atomic_store(&stop, true);
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    int64_t t1 = tk_clock_now_ns();
    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);

    tally t;
    memset(&t, 0, sizeof(t));
    account(recs, per * PRODUCERS, end, t_end, t1, &t);
    char what[96];
    snprintf(what, sizeof(what), "race with %s (%u threads, remove_on_cancel=%d)", names[end],
             workers, remove_on_cancel);
    print_tally(what, engine->name, &t, (double)(t1 - t_start) / 1e9);
    for (long i = 0; i < per * PRODUCERS; i++)
        if (recs[i].future != NULL)
            assert_int_equal(tk_future_release(recs[i].future), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    assert_clean(&t);
    assert_int_equal(handed, atomic_load(&handed_cb));
    assert_int_equal(t.handed, handed);
    assert_int_equal(st.handed_back_count, (uint64_t)handed);
    assert_identities_terminated("shutdown race, terminated", &st);
    assert_int_equal(st.rejected_count, (uint64_t)t.rejected);
    assert_int_equal(st.runs, (uint64_t)t.runs);
    assert_int_equal(st.queue_size, 0);
    assert_int_equal(st.pool_size, 0);
    free(recs);
}

static void test_shutdown_races(void **state) {
    (void)state;
    long total = rel_scaled(40000);
    uint64_t seed = 77;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        for (int end = END_SHUTDOWN; end <= END_SHUTDOWN_NOW; end++) {
            shutdown_race(tk_engine_at(e), (enum ending)end, false, total, seed++, WORKERS);
            shutdown_race(tk_engine_at(e), (enum ending)end, true, total, seed++, WORKERS);
            /* one thread: the heap's worker takes due tasks in batches, which
             * shutdown_now() must hand back like the engine's */
            shutdown_race(tk_engine_at(e), (enum ending)end, false, total / 4, seed++, 1);
        }
    }
}

/* ---- the engines' queue ops under concurrent load ---------------------------------------- */

/* Producers offer nodes with deadlines 0-5 ms ahead and remove some of them
 * again; consumers take() until the queue closes; a third party calls
 * remove_first(), peek() and size(). Afterwards every node came back exactly
 * once: taken (never before its deadline), removed (TK_OK), released after
 * TK_EINPROGRESS, or removed by remove_first(). */
typedef struct qnode {
    tk_node node;
    atomic_int taken, removed, released, first, inprogress;
    atomic_int early;
} qnode;

typedef struct qworld {
    const tk_queue_ops *ops;
    tk_queue *q;
    qnode *nodes;
    long n;
    atomic_ullong seq;
    atomic_bool producers_done;
    atomic_long taken_total;
} qworld;

static qnode *qnode_of(tk_node *n) {
    return (qnode *)(void *)((char *)n - offsetof(qnode, node));
}

static void q_release(void *ctx, tk_node *n) {
    (void)ctx;
    atomic_fetch_add(&qnode_of(n)->released, 1);
}

typedef struct qproducer {
    qworld *w;
    long from, to;
    uint64_t seed;
    long bad_offer;
} qproducer;

static void *q_producer(void *p_) {
    qproducer *p = p_;
    qworld *w = p->w;
    uint64_t s = p->seed;
    long ring[32];
    int nring = 0;
    for (long i = p->from; i < p->to; i++) {
        qnode *qn = &w->nodes[i];
        qn->node.deadline_ns =
            tk_clock_now_ns() + (int64_t)(rel_rand(&s) % (5 * TK_NS_PER_MS)) - TK_NS_PER_MS / 4;
        qn->node.seq = atomic_fetch_add(&w->seq, 1);
        if (w->ops->offer(w->q, &qn->node) != TK_OK) {
            p->bad_offer++;
            continue;
        }
        if (rel_rand(&s) % 100 < 30) {
            if (nring == 32) {
                long v = ring[rel_rand(&s) % 32];
                int rc = w->ops->remove(w->q, &w->nodes[v].node);
                if (rc == TK_OK)
                    atomic_fetch_add(&w->nodes[v].removed, 1);
                else if (rc == TK_EINPROGRESS)
                    atomic_fetch_add(&w->nodes[v].inprogress, 1);
                else if (rc != TK_ENOENT)
                    p->bad_offer++;
                ring[0] = ring[--nring];
            }
            ring[nring++] = i;
        }
        if ((i & 255) == 0)
            rel_sleep_ns(50 * TK_NS_PER_US); /* let time pass: deadlines come due */
    }
    return NULL;
}

static void *q_consumer(void *p_) {
    qworld *w = p_;
    for (;;) {
        tk_node *n = NULL;
        int rc = w->ops->take(w->q, &n);
        if (rc == TK_ECLOSED)
            break;
        if (rc != TK_OK || n == NULL)
            continue;
        int64_t now = tk_clock_now_ns();
        qnode *qn = qnode_of(n);
        if (now < n->deadline_ns)
            atomic_store(&qn->early, 1);
        atomic_fetch_add(&qn->taken, 1);
        atomic_fetch_add(&w->taken_total, 1);
    }
    return NULL;
}

static void *q_meddler(void *p_) {
    qworld *w = p_;
    while (!atomic_load(&w->producers_done)) {
        tk_node *n = NULL;
        if (w->ops->remove_first(w->q, &n) == TK_OK)
            atomic_fetch_add(&qnode_of(n)->first, 1);
        int64_t dl;
        uint64_t seq;
        (void)w->ops->peek(w->q, &dl, &seq);
        (void)w->ops->size(w->q);
        rel_sleep_ns(300 * TK_NS_PER_US);
    }
    return NULL;
}

static void test_engine_ops_concurrent(void **state) {
    (void)state;
    long n = rel_scaled(100000);
    for (size_t e = 0; e < tk_engine_count(); e++) {
        qworld w;
        memset(&w, 0, sizeof(w));
        w.ops = tk_engine_at(e);
        w.n = n;
        w.nodes = calloc((size_t)n, sizeof(qnode));
        assert_non_null(w.nodes);
        tk_queue_config cfg;
        tk_queue_config_init_for(&cfg, w.ops);
        assert_int_equal(tk_queue_create(w.ops, &cfg, q_release, NULL, &w.q), TK_OK);
        int64_t t0 = tk_clock_now_ns();
        pthread_t pt[2], ct[2], mt;
        qproducer qp[2];
        for (int i = 0; i < 2; i++) {
            qp[i] = (qproducer){&w, i * (n / 2), (i + 1) * (n / 2), 991 + (uint64_t)i, 0};
            assert_int_equal(pthread_create(&pt[i], NULL, q_producer, &qp[i]), 0);
            assert_int_equal(pthread_create(&ct[i], NULL, q_consumer, &w), 0);
        }
        assert_int_equal(pthread_create(&mt, NULL, q_meddler, &w), 0);
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_join(pt[i], NULL), 0);
        atomic_store(&w.producers_done, true);
        assert_int_equal(pthread_join(mt, NULL), 0);
        w.ops->close(w.q, TK_QUEUE_CLOSE_WHEN_EMPTY);
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_join(ct[i], NULL), 0);
        assert_int_equal(w.ops->size(w.q), 0);
        assert_null(w.ops->drain(w.q));
        assert_int_equal(w.ops->check(w.q), TK_OK);
        w.ops->destroy(w.q); /* releases what is still pending */
        int64_t t1 = tk_clock_now_ns();
        long taken = 0, removed = 0, released = 0, first = 0, early = 0, bad = 0;
        for (long i = 0; i < n; i++) {
            qnode *qn = &w.nodes[i];
            int t = atomic_load(&qn->taken), r = atomic_load(&qn->removed);
            int rl = atomic_load(&qn->released), f = atomic_load(&qn->first);
            int ip = atomic_load(&qn->inprogress);
            taken += t;
            removed += r;
            released += rl;
            first += f;
            early += atomic_load(&qn->early);
            if (t + r + rl + f != 1 || rl != ip) {
                if (bad++ < 10)
                    print_error("  [%s] node %ld: taken %d, removed %d, in progress %d, released "
                                "%d, remove_first %d\n",
                                w.ops->name, i, t, r, ip, rl, f);
            }
        }
        print_message(
            "  [%s] queue ops: %ld nodes in %.2f s: %ld taken, %ld removed, %ld released "
            "after TK_EINPROGRESS, %ld by remove_first | lost/duplicated %ld, early %ld\n",
            w.ops->name, n, (double)(t1 - t0) / 1e9, taken, removed, released, first, bad, early);
        assert_int_equal(qp[0].bad_offer + qp[1].bad_offer, 0);
        assert_int_equal(bad, 0);
        assert_int_equal(early, 0);
        free(w.nodes);
    }
}

/* ---- embedded timers ------------------------------------------------------- */

typedef struct trec {
    tk_timer timer;
    tk_executor *ex;
    atomic_long starts_ok; /* starts that returned TK_OK (callback's included) */
    atomic_long fires;
    atomic_long stops_ok;
    atomic_long rejected;  /* starts that returned TK_EREJECTED */
    atomic_long other_rc;  /* the last unexpected status of a start or stop */
    atomic_int restart_in; /* the callback restarts while this is > 0 */
} trec;

static void trec_fire(tk_timer *t) {
    trec *r = (trec *)(void *)((char *)t - offsetof(trec, timer));
    /* (No lateness check here: a producer may start the timer again as soon
     * as it turned idle, so its deadline is no longer this run's. The
     * conformance suite checks never-early.) */
    atomic_fetch_add(&r->fires, 1);
    if (atomic_fetch_sub(&r->restart_in, 1) > 0) {
        int rc = tk_timer_start(r->ex, t, 0);
        if (rc == TK_OK)
            atomic_fetch_add(&r->starts_ok, 1);
        else if (rc == TK_EREJECTED)
            atomic_fetch_add(&r->rejected, 1);
        else if (rc != TK_ESTATE) /* a producer started it since it turned idle */
            atomic_store(&r->other_rc, rc);
    }
}

typedef struct tproducer {
    pthread_t th;
    trec *recs;
    long n, ops;
    uint64_t seed;
    atomic_int *stop;
} tproducer;

static void *tproducer_main(void *p_) {
    tproducer *p = p_;
    for (long k = 0; k < p->ops && !atomic_load(p->stop); k++) {
        trec *r = &p->recs[rel_rand(&p->seed) % (uint64_t)p->n];
        uint64_t x = rel_rand(&p->seed);
        if (x % 3 != 0) {
            if (x % 7 == 0)
                atomic_store(&r->restart_in, 1);
            int rc = tk_timer_start(r->ex, &r->timer, (int64_t)(x >> 40) % (5 * TK_NS_PER_MS));
            if (rc == TK_OK)
                atomic_fetch_add(&r->starts_ok, 1);
            else if (rc == TK_EREJECTED)
                atomic_fetch_add(&r->rejected, 1);
            else if (rc != TK_ESTATE) /* pending, or stopped and not idle yet */
                atomic_store(&r->other_rc, rc);
        } else {
            int rc = tk_timer_stop(r->ex, &r->timer);
            if (rc == TK_OK)
                atomic_fetch_add(&r->stops_ok, 1);
            else if (rc != TK_ENOENT)
                atomic_store(&r->other_rc, rc);
        }
        if (x % 16 == 1) /* now and then a pause, so that timers get to fire */
            rel_sleep_ns(20 * TK_NS_PER_US);
    }
    return NULL;
}

static void timer_round(const tk_queue_ops *engine, enum ending end, uint64_t seed) {
    enum { TP = 3 };
    const long per = 2048;
    const long ops = rel_scaled(400000); /* the shutdown usually ends them first */
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 2, NULL);
    tk_executor *ex = NULL;
    assert_int_equal(tk_executor_create(&opt, &ex), TK_OK);
    trec *recs = calloc((size_t)(TP * per), sizeof(*recs));
    assert_non_null(recs);
    for (long i = 0; i < TP * per; i++) {
        assert_int_equal(tk_timer_init(&recs[i].timer, trec_fire), TK_OK);
        recs[i].ex = ex;
    }
    atomic_int stop = 0;
    tproducer p[TP];
    for (int k = 0; k < TP; k++) {
        p[k] = (tproducer){.recs = recs + k * per,
                           .n = per,
                           .ops = ops,
                           .seed = seed + (uint64_t)k * 7919u,
                           .stop = &stop};
        assert_int_equal(pthread_create(&p[k].th, NULL, tproducer_main, &p[k]), 0);
    }
    rel_sleep_ns(150 * TK_NS_PER_MS);
    if (end == END_SHUTDOWN_NOW)
        assert_true(tk_executor_shutdown_now(ex, NULL, NULL) >= 0);
    else
        assert_int_equal(tk_executor_shutdown(ex), TK_OK);
    rel_sleep_ns(5 * TK_NS_PER_MS); /* producers go on into the shut-down pool */
    atomic_store(&stop, 1);
    for (int k = 0; k < TP; k++)
        assert_int_equal(pthread_join(p[k].th, NULL), 0);
    assert_int_equal(tk_executor_await_termination(ex, 30 * TK_NS_PER_S), TK_OK);
    tk_executor_stats st;
    assert_int_equal(tk_executor_stats_get(ex, &st), TK_OK);
    assert_int_equal(tk_executor_destroy(ex), TK_OK);

    long starts = 0, fires = 0, stops = 0, dropped = 0, rejected = 0;
    for (long i = 0; i < TP * per; i++) {
        trec *r = &recs[i];
        assert_true(tk_timer_is_idle(&r->timer));
        assert_int_equal(atomic_load(&r->other_rc), 0);
        long d = atomic_load(&r->starts_ok) - atomic_load(&r->fires) - atomic_load(&r->stops_ok);
        /* Nothing fired or stopped twice for one start. A stop may win
         * against a start that the shutdown then rejects: the stop saw the
         * timer pending (TK_OK: it never fires), the start took it back
         * (TK_EREJECTED), so such a start counts as rejected, not started. */
        assert_true(d + atomic_load(&r->rejected) >= 0);
        if (d < 0)
            d = 0;
        starts += atomic_load(&r->starts_ok);
        fires += atomic_load(&r->fires);
        stops += atomic_load(&r->stops_ok);
        rejected += atomic_load(&r->rejected);
        dropped += d;
    }
    print_message("timers %-5s %-12s: %ld starts, %ld fired, %ld stopped, %ld dropped by the "
                  "shutdown, %ld rejected\n",
                  engine->name, end == END_SHUTDOWN_NOW ? "shutdown_now" : "shutdown", starts,
                  fires, stops, dropped, rejected);
    assert_int_equal(st.accepted_count, (uint64_t)starts);
    assert_int_equal(st.runs, (uint64_t)fires);
    /* and the timers a worker took after a stop() won, dropped */
    assert_true(st.completed_count >= (uint64_t)fires);
    assert_int_equal(st.handed_back_count, 0); /* timers are never handed back */
    assert_identities_terminated("timers, terminated", &st);
    assert_int_equal(st.cancelled_count, (uint64_t)(stops + dropped));
    assert_int_equal(st.rejected_count, (uint64_t)rejected);
    assert_int_equal(st.queue_size, 0);
    if (end == END_SHUTDOWN)
        assert_int_equal(dropped, 0); /* delayed one-shots run after shutdown() */
    free(recs);
}

static void test_timers_exact_accounting(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        timer_round(tk_engine_at(e), END_SHUTDOWN, 11 + e);
        timer_round(tk_engine_at(e), END_SHUTDOWN_NOW, 23 + e);
    }
}

/* ---- blocked gets, aborts and invoke_any under load ----------------------------------- */

/* Getter threads take futures in turn and wait for each with a long timeout,
 * waiting again after every TK_EINTR, while an aborter thread calls
 * tk_future_abort_get() on futures at random and an invoker thread runs
 * invoke_any calls whose winner comes late, so its waits meet the
 * completions of every other task. A lost wake-up shows as a get or an
 * invoke_any that times out: every task is due within 100 ms. */
typedef struct abort_load {
    tk_executor *ex;
    tk_future **fs;
    long n;
    atomic_long next;     /* next future a getter waits for */
    atomic_long eintr;    /* gets aborted (then waited again) */
    atomic_long bad;      /* gets that returned anything but TK_OK / TK_EINTR */
    atomic_int stop;      /* the getters and the invoker are done */
    atomic_long aborts;   /* abort_get calls */
    atomic_long any_bad;  /* invoke_any calls with the wrong outcome */
    atomic_long any_done; /* invoke_any calls made */
    atomic_long runs;     /* task runs */
} abort_load;

static int al_task(tk_run *run, void *arg) {
    (void)run;
    atomic_fetch_add(&((abort_load *)arg)->runs, 1);
    return 0;
}

static int al_fail(tk_run *run, void *arg) {
    (void)run;
    (void)arg;
    return 1;
}

static int al_win(tk_run *run, void *arg) {
    tk_run_set_result(run, arg);
    return 0;
}

static void *al_getter(void *arg) {
    abort_load *l = arg;
    for (;;) {
        long i = atomic_fetch_add(&l->next, 1);
        if (i >= l->n)
            return NULL;
        int rc;
        while ((rc = tk_future_get_timeout(l->fs[i], 10 * TK_NS_PER_S, NULL)) == TK_EINTR)
            atomic_fetch_add(&l->eintr, 1);
        if (rc != TK_OK)
            atomic_fetch_add(&l->bad, 1);
    }
}

static void *al_aborter(void *arg) {
    abort_load *l = arg;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    while (!atomic_load(&l->stop)) {
        long base = atomic_load(&l->next);
        long i = base + (long)(rel_rand(&seed) % 4) - 1;
        if (i >= 0 && i < l->n) {
            tk_future_abort_get(l->fs[i]);
            atomic_fetch_add(&l->aborts, 1);
        }
        if (rel_rand(&seed) % 8 == 0)
            rel_sleep_ns(20 * TK_NS_PER_US);
    }
    return NULL;
}

static void *al_invoker(void *arg) {
    abort_load *l = arg;
    uint64_t seed = 7;
    for (long c = rel_scaled(300); c > 0; c--) {
        tk_task_spec s[3];
        memset(s, 0, sizeof(s));
        for (int k = 0; k < 3; k++)
            s[k].kind = TK_TASK_ONE_SHOT;
        s[0].fn = al_fail;
        s[1].fn = al_fail;
        s[1].delay_ns = (int64_t)(rel_rand(&seed) % 1000) * TK_NS_PER_US;
        s[2].fn = al_win;
        s[2].arg = l;
        s[2].delay_ns = (int64_t)(rel_rand(&seed) % 2000) * TK_NS_PER_US;
        void *result = NULL;
        int rc = tk_executor_invoke_any_timeout(l->ex, s, 3, 10 * TK_NS_PER_S, &result);
        if (rc != TK_OK || result != l)
            atomic_fetch_add(&l->any_bad, 1);
        atomic_fetch_add(&l->any_done, 1);
    }
    return NULL;
}

static void abort_round(const tk_queue_ops *engine) {
    enum { GETTERS = 3 };
    tk_executor_options opt;
    tk_queue_config cfg;
    rel_options(&opt, &cfg, engine, 2, NULL);
    abort_load l;
    memset(&l, 0, sizeof(l));
    assert_int_equal(tk_executor_create(&opt, &l.ex), TK_OK);
    l.n = rel_scaled(4000);
    l.fs = calloc((size_t)l.n, sizeof(*l.fs));
    assert_non_null(l.fs);
    uint64_t seed = 42;
    for (long i = 0; i < l.n; i++) {
        int64_t delay = (int64_t)(rel_rand(&seed) % 100000) * TK_NS_PER_US;
        assert_int_equal(tk_executor_schedule(l.ex, al_task, &l, delay, &l.fs[i]), TK_OK);
    }
    pthread_t g[GETTERS], ab, inv;
    for (int i = 0; i < GETTERS; i++)
        assert_int_equal(pthread_create(&g[i], NULL, al_getter, &l), 0);
    assert_int_equal(pthread_create(&ab, NULL, al_aborter, &l), 0);
    assert_int_equal(pthread_create(&inv, NULL, al_invoker, &l), 0);
    for (int i = 0; i < GETTERS; i++)
        pthread_join(g[i], NULL);
    pthread_join(inv, NULL);
    atomic_store(&l.stop, 1);
    pthread_join(ab, NULL);
    print_message("  [%s] %ld gets, %ld aborts, %ld aborted gets, %ld invoke_any calls\n",
                  engine->name, l.n, atomic_load(&l.aborts), atomic_load(&l.eintr),
                  atomic_load(&l.any_done));
    long bad = atomic_load(&l.bad), any_bad = atomic_load(&l.any_bad);
    long runs = atomic_load(&l.runs);
    for (long i = 0; i < l.n; i++)
        tk_future_release(l.fs[i]);
    free(l.fs);
    assert_int_equal(tk_executor_destroy(l.ex), TK_OK);
    assert_int_equal(bad, 0);
    assert_int_equal(any_bad, 0);
    assert_int_equal(runs, l.n);
}

static void test_get_abort_and_invoke_any_races(void **state) {
    (void)state;
    for (size_t e = 0; e < tk_engine_count(); e++)
        abort_round(tk_engine_at(e));
}

int main(int argc, char **argv) {
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    print_message("stress: scale %.3f%s, soak %.0f s\n", rel_scale(),
                  rel_sanitized() ? " (sanitizer build)" : "", rel_soak_seconds());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_load_exact_accounting),
        cmocka_unit_test(test_shutdown_races),
        cmocka_unit_test(test_engine_ops_concurrent),
        cmocka_unit_test(test_timers_exact_accounting),
        cmocka_unit_test(test_get_abort_and_invoke_any_races),
    };
    return cmocka_run_group_tests_name("reliability_stress", tests, NULL, NULL);
}
