/* SPDX-License-Identifier: MIT */
/* timerkit: what an idle wheel costs: nothing. A wheel holding one node an
 * hour ahead, and a wheel emptied after a node went through it, with a taker
 * blocked in take(), wake neither the tick thread nor the taker over two
 * seconds: the engine's wakeups() counter does not move, and neither do the
 * threads' voluntary context switches (/proc/self/task/TID/status), for the
 * default wheel (1 ms x 512) and for 1 ms x 1024. Under valgrind
 * (TK_VALGRIND=1), whose scheduler switches threads of its own accord, only
 * the counter is checked. cmocka asserts only on the main thread. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "timerkit/clock.h"
#include "timerkit/queue.h"
#include "timerkit/status.h"

#define MS TK_NS_PER_MS
#define HOUR (INT64_C(3600) * TK_NS_PER_S)
#define TICK_THREAD_NAME "tk-idle-test"

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static bool under_valgrind(void) {
    const char *vg = getenv("TK_VALGRIND");
    return vg != NULL && vg[0] != '\0' && vg[0] != '0';
}

/* Reads a line of /proc/self/task/TID/FILE starting with `key` into buf;
 * false if there is none. */
static bool task_line(int tid, const char *file, const char *key, char *buf, size_t len) {
    char path[96];
    snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool found = false;
    while (!found && fgets(buf, (int)len, f) != NULL)
        found = strncmp(buf, key, strlen(key)) == 0;
    fclose(f);
    return found;
}

/* The thread's voluntary context switches so far (-1: unknown). */
static long voluntary_switches(int tid) {
    char line[128];
    if (!task_line(tid, "status", "voluntary_ctxt_switches:", line, sizeof(line)))
        return -1;
    return strtol(line + strlen("voluntary_ctxt_switches:"), NULL, 10);
}

/* The id of this process's thread named `name` (0: none). */
static int thread_named(const char *name) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return 0;
    int tid = 0;
    for (struct dirent *e; tid == 0 && (e = readdir(d)) != NULL;) {
        char comm[64];
        int t = atoi(e->d_name);
        if (t > 0 && task_line(t, "comm", name, comm, sizeof(comm)))
            tid = t;
    }
    closedir(d);
    return tid;
}

/* Whether thread `tid` is asleep (state S). */
static bool thread_sleeps(int tid) {
    char line[128];
    return task_line(tid, "status", "State:", line, sizeof(line)) && strchr(line, 'S') != NULL;
}

typedef struct taker {
    const tk_queue_ops *ops;
    tk_queue *q;
    atomic_int tid;
    int rc;
    pthread_t th;
} taker;

static void *taker_main(void *arg) {
    taker *k = arg;
    atomic_store(&k->tid, (int)syscall(SYS_gettid));
    tk_node *x = NULL;
    k->rc = k->ops->take(k->q, &x);
    return NULL;
}

/* Creates a wheel of `slots` slots of 1 ms (its tick thread named
 * TICK_THREAD_NAME) and leaves it idle, holding one node an hour ahead
 * (`far`) or emptied after a due node went through it; a taker waits in
 * take(). Then watches two seconds and asserts nothing woke. */
static void watch_idle(const char *spec, int64_t slots, tk_node *far) {
    const tk_queue_ops *ops = tk_engine_wheel();
    tk_queue_config cfg;
    assert_int_equal(tk_queue_config_init_for(&cfg, ops), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "tick", TK_NS_PER_MS), TK_OK);
    assert_int_equal(tk_queue_config_set_value(&cfg, "slots", slots), TK_OK);
    cfg.thread_name = TICK_THREAD_NAME;
    tk_queue *q = NULL;
    assert_int_equal(ops->create(ops, &cfg, NULL, NULL, &q), TK_OK);
    tk_node through = {0};
    through.deadline_ns = tk_clock_now_ns() - 1;
    assert_int_equal(ops->offer(q, &through), TK_OK); /* starts the tick thread */
    tk_node *x = NULL;
    assert_int_equal(ops->poll(q, 5 * TK_NS_PER_S, &x), TK_OK);
    assert_ptr_equal(x, &through);
    if (far != NULL) {
        far->deadline_ns = tk_clock_now_ns() + HOUR;
        assert_int_equal(ops->offer(q, far), TK_OK);
    }
    taker k = {.ops = ops, .q = q};
    assert_int_equal(pthread_create(&k.th, NULL, taker_main, &k), 0);
    int tick_tid = thread_named(TICK_THREAD_NAME);
    assert_true(tick_tid > 0);
    for (int i = 0; i < 5000 && (atomic_load(&k.tid) == 0 || !thread_sleeps(atomic_load(&k.tid)));
         i++)
        sleep_ms(1);
    sleep_ms(200); /* the tick thread's last pass is over, it sleeps */

    uint64_t w0 = ops->wakeups(q);
    long tick0 = voluntary_switches(tick_tid), taker0 = voluntary_switches(atomic_load(&k.tid));
    sleep_ms(2000);
    uint64_t w1 = ops->wakeups(q);
    long tick1 = voluntary_switches(tick_tid), taker1 = voluntary_switches(atomic_load(&k.tid));
    print_message("      %s, %s: over 2 s %llu wake-ups; voluntary switches: tick thread %ld, "
                  "taker %ld\n",
                  spec, far != NULL ? "one node an hour ahead" : "empty",
                  (unsigned long long)(w1 - w0), tick1 - tick0, taker1 - taker0);

    ops->wake(q); /* lets the taker go */
    pthread_join(k.th, NULL);
    assert_int_equal(k.rc, TK_EINTR);
    if (far != NULL)
        assert_int_equal(ops->remove(q, far), TK_OK); /* no release callback: at once */
    assert_int_equal(ops->size(q), 0);
    ops->destroy(q);

    assert_int_equal(w1 - w0, 0);
    if (under_valgrind())
        return;
    assert_true(tick0 >= 0 && taker0 >= 0);
    assert_int_equal(tick1 - tick0, 0);
    assert_int_equal(taker1 - taker0, 0);
}

static void an_empty_wheel_wakes_nobody(void **state) {
    (void)state;
    watch_idle("wheel (1 ms x 512, the default)", 512, NULL);
    watch_idle("wheel:tick=1ms,slots=1024", 1024, NULL);
}

static void one_node_an_hour_ahead_wakes_nobody(void **state) {
    (void)state;
    tk_node far = {0};
    watch_idle("wheel (1 ms x 512, the default)", 512, &far);
    memset(&far, 0, sizeof(far));
    watch_idle("wheel:tick=1ms,slots=1024", 1024, &far);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_empty_wheel_wakes_nobody),
        cmocka_unit_test(one_node_an_hour_ahead_wakes_nobody),
    };
    return cmocka_run_group_tests_name("wheel_idle", tests, NULL, NULL);
}
