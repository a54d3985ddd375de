/* SPDX-License-Identifier: MIT */
/* tkbench: a loop thread fed through a hand-off queue (handoff.h). */
#define _GNU_SOURCE
#include "handoff.h"

#include <stdlib.h>
#include <string.h>

#include "tkbench.h"

int tkb_handoff_init(tkb_handoff *h, const tkb_handoff_hooks *hooks, int64_t timer_slack_ns) {
    memset(h, 0, sizeof *h);
    h->hooks = hooks;
    h->slack = timer_slack_ns;
    if (pthread_mutex_init(&h->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&h->cv, NULL) != 0) {
        pthread_mutex_destroy(&h->mu);
        return -1;
    }
    return 0;
}

static void *loop_main(void *arg) {
    tkb_handoff *h = arg;
    tkb_set_timer_slack(h->slack);
    h->hooks->run(h);
    return NULL;
}

int tkb_handoff_start(tkb_handoff *h) {
    return pthread_create(&h->thread, NULL, loop_main, h) == 0 ? 0 : -1;
}

void tkb_handoff_push(tkb_handoff *h, int kind, void *timer, int64_t deadline_ns) {
    pthread_mutex_lock(&h->mu);
    if (h->nops == h->capops) {
        size_t nc = h->capops ? h->capops * 2 : 1024;
        tkb_handoff_op *no = realloc(h->ops, nc * sizeof *no);
        if (no == NULL)
            abort(); /* benchmark harness: out of memory ends the run */
        h->ops = no;
        h->capops = nc;
    }
    h->ops[h->nops++] = (tkb_handoff_op){kind, timer, deadline_ns};
    h->submitted++;
    pthread_mutex_unlock(&h->mu);
    h->hooks->wake(h);
}

void tkb_handoff_drain(tkb_handoff *h) {
    /* swap the queue with the (empty) work array: producers go on appending
     * while the loop thread applies the batch without the lock */
    pthread_mutex_lock(&h->mu);
    tkb_handoff_op *batch = h->ops;
    size_t n = h->nops;
    h->ops = h->work;
    size_t cap = h->capops;
    h->capops = h->capwork;
    h->nops = 0;
    h->work = batch;
    h->capwork = cap;
    pthread_mutex_unlock(&h->mu);
    h->hooks->apply(h, batch, n);
    pthread_mutex_lock(&h->mu);
    h->processed += n;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void wait_processed(tkb_handoff *h) {
    pthread_mutex_lock(&h->mu);
    uint64_t target = h->submitted;
    while (h->processed < target)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

void tkb_handoff_sync(tkb_handoff *h, unsigned rounds) {
    wait_processed(h);
    for (unsigned r = 1; r < rounds; r++) {
        tkb_handoff_push(h, TKB_HO_NOP, NULL, 0);
        wait_processed(h);
    }
}

void tkb_handoff_stop(tkb_handoff *h) {
    tkb_handoff_push(h, TKB_HO_QUIT, NULL, 0);
    pthread_join(h->thread, NULL);
}

void tkb_handoff_fini(tkb_handoff *h) {
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h->ops);
    free(h->work);
}
