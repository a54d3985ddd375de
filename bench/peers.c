/* tkbench: peers from spec strings.
 *
 *   spec   := NAME [ ":" key "=" value { "," key "=" value } ] [ "@" MODE ]
 *   NAME   := an engine of the library (tk_engine_by_name) | a baseline
 *   MODE   := "embedded"   (engines only: the executor's embedded timers)
 *
 * An engine's parameters are parsed, checked and written back in canonical
 * form by the library (tk_queue_config_parse, tk_queue_config_format), so the
 * spec that names a peer here configures an executor in any program. A
 * peer's canonical spec names it in every result; its label, derived from the
 * spec (engine, then each parameter the spec states, then the mode:
 * "wheel-1ms-1024", "heap-spin150us", "wheel-1ms-1024-embedded"), names it in
 * figures and tables. The labels of the suites' peers are accepted as
 * aliases of their specs. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tkbench.h"

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

#define EMBEDDED_MODE "embedded"
#define OTHER_SLOT 10 /* slots 10-12: peers without a slot of their own */

/* Peers that are not engines of the library. */
typedef struct baseline {
    const char *name, *kind, *description;
    const tkb_core_ops *core;
    const tkb_svc_ops *svc;
    size_t core_max_n;
    const char *missing;
    int slot;
} baseline;

static const baseline baselines[] = {
    {"libuv", "baseline", "uv_timer_start/stop (Debian libuv1)", UV_CORE, UV_SVC, 0, UV_MISSING, 5},
    {"libevent", "baseline", "evtimer_add/del (Debian libevent 2.1, default base)", EV_CORE, EV_SVC,
     0, EV_MISSING, 6},
    {"naive-heap", "strawman", "binary heap, no index: linear-search cancel", &tkb_core_naive_heap,
     NULL, 100000, NULL, 7},
    {"sorted-list", "strawman", "sorted doubly linked list", &tkb_core_sorted_list, NULL, 10000,
     NULL, 8},
    {"floor", "floor", "the machine's limits, measured in the same run", NULL, NULL, 0, NULL, 9},
};

/* How tkbench drives each engine of the library: its core, its embedded
 * timers (whose stopped timers the wheel's tick thread hands back later:
 * tkb_svc_ops.reusable), and its style slots (a family of `span` slots from
 * `slot`, ranked by parameters). An engine missing here runs at executor
 * level only, with slots among the others. */
typedef struct engine_peer {
    const char *engine;
    const char *description;
    const tkb_core_ops *core;
    const tkb_svc_ops *embedded;
    int slot, span;
} engine_peer;

static const engine_peer engine_peers[] = {
    {"heap", "4-ary indexed heap (engines/heap)", &tkb_core_heap, &tkb_svc_executor_timer, 1, 1},
    {"wheel", "hashed wheel (engines/wheel)", &tkb_core_wheel, &tkb_svc_executor_timer_wheel, 2, 3},
};

static const engine_peer *engine_peer_of(const tk_queue_ops *ops) {
    for (size_t i = 0; i < TKB_COUNT(engine_peers); i++)
        if (strcmp(engine_peers[i].engine, ops->name) == 0)
            return &engine_peers[i];
    return NULL;
}

static const baseline *baseline_find(const char *name, size_t len) {
    for (size_t i = 0; i < TKB_COUNT(baselines); i++)
        if (strlen(baselines[i].name) == len && strncmp(baselines[i].name, name, len) == 0)
            return &baselines[i];
    return NULL;
}

/* Does the parameter differ from its default? */
static bool param_set(const tk_queue_param *prm, const tk_queue_config *qc) {
    tk_queue_config def;
    char a[64], b[64];
    tk_queue_config_init(&def);
    if (tk_queue_param_format(prm, qc, a, sizeof a) != TK_OK ||
        tk_queue_param_format(prm, &def, b, sizeof b) != TK_OK)
        return true;
    return strcmp(a, b) != 0;
}

/* An adapter-only parameter away from its default: the core is not what the
 * peer measures then (the spinning variants). */
static bool has_adapter_params(const tkb_peer *p) {
    for (size_t i = 0; i < p->engine->param_count; i++) {
        const tk_queue_param *prm = &p->engine->params[i];
        if ((prm->flags & TK_PARAM_ADAPTER) != 0 && param_set(prm, &p->qc))
            return true;
    }
    return false;
}

/* label: engine, "-<value>" for each parameter always written, "-<key><value>"
 * for each other one the spec sets, then "-embedded". */
static void engine_label(tkb_peer *p) {
    size_t len = (size_t)snprintf(p->label, sizeof p->label, "%s", p->engine->name);
    for (size_t i = 0; i < p->engine->param_count && len < sizeof p->label; i++) {
        const tk_queue_param *prm = &p->engine->params[i];
        char v[64];
        bool always = (prm->flags & TK_PARAM_ALWAYS) != 0;
        if ((!always && !param_set(prm, &p->qc)) ||
            tk_queue_param_format(prm, &p->qc, v, sizeof v) != TK_OK)
            continue;
        len += (size_t)snprintf(p->label + len, sizeof p->label - len, "-%s%s",
                                always ? "" : prm->key, v);
    }
    if (p->embedded && len < sizeof p->label)
        snprintf(p->label + len, sizeof p->label - len, "-%s", EMBEDDED_MODE);
}

static void set_file(tkb_peer *p) {
    size_t i = 0;
    for (; p->label[i] != '\0' && i + 1 < sizeof p->file; i++) {
        char ch = p->label[i];
        p->file[i] = isalnum((unsigned char)ch) || ch == '-' || ch == '.' || ch == '_' ? ch : '_';
    }
    p->file[i] = '\0';
}

static int fail(char *err, size_t len, const char *fmt, const char *a, const char *b) {
    if (err != NULL && len > 0)
        snprintf(err, len, fmt, a, b);
    return -1;
}

/* What a spec may name, for error messages: "engines heap, wheel; baselines
 * libuv, ...". */
static void known_names(char *buf, size_t len) {
    size_t k = (size_t)snprintf(buf, len, "engines");
    for (size_t i = 0; i < tk_engine_count() && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s %s", i ? "," : "", tk_engine_at(i)->name);
    for (size_t i = 0; i < TKB_COUNT(baselines) && k < len; i++)
        k +=
            (size_t)snprintf(buf + k, len - k, "%s %s", i ? "," : "; baselines", baselines[i].name);
    if (k < len)
        snprintf(buf + k, len - k,
                 "; an engine takes parameters (wheel:tick=1ms,slots=1024) and the mode "
                 "@" EMBEDDED_MODE "; `tkbench list` shows them all, with the aliases");
}

static int parse_spec(const char *spec, tkb_peer *p, char *err, size_t err_len) {
    char body[TKB_SPEC_MAX];
    memset(p, 0, sizeof *p);
    if (spec == NULL || spec[0] == '\0')
        return fail(err, err_len, "empty peer spec%s%s", "", "");
    if (strlen(spec) >= sizeof body)
        return fail(err, err_len, "peer spec '%.60s...' is too long%s", spec, "");
    snprintf(body, sizeof body, "%s", spec);
    char *at = strchr(body, '@');
    if (at != NULL) {
        *at = '\0';
        if (strcmp(at + 1, EMBEDDED_MODE) != 0)
            return fail(err, err_len, "%s: unknown mode '@%s'; the only mode is @" EMBEDDED_MODE,
                        spec, at + 1);
        p->embedded = true;
    }
    size_t name_len = strcspn(body, ":");
    const baseline *b = baseline_find(body, name_len);
    if (b != NULL) {
        if (body[name_len] != '\0')
            return fail(err, err_len, "%s: %s takes no parameters", spec, b->name);
        if (p->embedded)
            return fail(err, err_len, "%s: only an engine has the mode @" EMBEDDED_MODE "%s", spec,
                        "");
        snprintf(p->spec, sizeof p->spec, "%s", b->name);
        snprintf(p->id, sizeof p->id, "%s", b->name);
        snprintf(p->label, sizeof p->label, "%s", b->name);
        p->kind = b->kind;
        p->description = b->description;
        p->core = b->core;
        p->svc = b->svc;
        p->core_max_n = b->core_max_n;
        p->missing = b->missing;
        p->slot = b->slot;
        set_file(p);
        return 0;
    }
    char msg[512];
    const tk_queue_ops *ops = NULL;
    int rc = tk_queue_config_parse(body, &ops, &p->qc, msg, sizeof msg);
    if (rc == TK_ENOENT) {
        char known[512];
        known_names(known, sizeof known);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(name_len < 60 ? name_len : 60), body);
        return fail(err, err_len, "unknown peer '%s'; known: %s", name, known);
    }
    if (rc != TK_OK)
        return fail(err, err_len, "%s: %s", spec, msg);
    p->engine = ops;
    p->kind = "engine";
    char canon[TKB_SPEC_MAX];
    if (tk_queue_config_format(ops, &p->qc, canon, sizeof canon) != TK_OK)
        return fail(err, err_len, "%s: the canonical spec is too long%s", spec, "");
    if (snprintf(p->spec, sizeof p->spec, "%s%s", canon, p->embedded ? "@" EMBEDDED_MODE : "") >=
        (int)sizeof p->spec)
        return fail(err, err_len, "%s: the canonical spec is too long%s", spec, "");
    snprintf(p->id, sizeof p->id, "%s", p->spec);
    const engine_peer *ep = engine_peer_of(ops);
    p->description = ep != NULL ? ep->description : "an engine of the library";
    if (p->embedded)
        p->svc = ep != NULL ? ep->embedded : &tkb_svc_executor_timer_wheel;
    else
        p->svc = &tkb_svc_executor;
    p->core = ep != NULL && !p->embedded && !has_adapter_params(p) ? ep->core : NULL;
    engine_label(p);
    set_file(p);
    return 0;
}

int tkb_peer_parse(const char *spec, tkb_peer *p, char *err, size_t err_len) {
    if (parse_spec(spec, p, err, err_len) == 0)
        return 0;
    /* an alias: the label of one of the suites' peers */
    for (size_t i = 0; spec != NULL && i < tkb_suite_peer_count; i++) {
        tkb_peer q;
        if (parse_spec(tkb_suite_peers[i].spec, &q, NULL, 0) == 0 && strcmp(q.label, spec) == 0) {
            *p = q;
            return 0;
        }
    }
    return -1;
}

void tkb_peer_list(FILE *f) {
    fprintf(f, "peers (spec: NAME[:key=value,...][@%s]):\n", EMBEDDED_MODE);
    for (size_t i = 0; i < tk_engine_count(); i++) {
        const tk_queue_ops *ops = tk_engine_at(i);
        const engine_peer *ep = engine_peer_of(ops);
        tk_queue_config def;
        tk_queue_config_init(&def);
        fprintf(f, "  %-12s engine    %s; levels: %sexecutor; @%s: embedded timers\n", ops->name,
                ep != NULL ? ep->description : "an engine of the library",
                ep != NULL ? "core, " : "", EMBEDDED_MODE);
        for (size_t k = 0; k < ops->param_count; k++) {
            const tk_queue_param *prm = &ops->params[k];
            char v[64];
            if (tk_queue_param_format(prm, &def, v, sizeof v) != TK_OK)
                snprintf(v, sizeof v, "?");
            fprintf(f, "    %-12s %s (default %s%s)\n", prm->key, prm->help, v,
                    (prm->flags & TK_PARAM_ADAPTER) != 0 ? "; executor level only" : "");
        }
    }
    for (size_t i = 0; i < TKB_COUNT(baselines); i++) {
        const baseline *b = &baselines[i];
        fprintf(f, "  %-12s %-9s %s%s%s%s\n", b->name, b->kind, b->description,
                b->missing ? "  [not built: " : "", b->missing ? b->missing : "",
                b->missing ? "]" : "");
    }
    fprintf(f, "default peers of every suite (alias = spec):\n");
    for (size_t i = 0; i < tkb_suite_peer_count; i++) {
        tkb_peer q;
        if (parse_spec(tkb_suite_peers[i].spec, &q, NULL, 0) != 0)
            continue;
        fprintf(f, "  %-26s = %s%s\n", q.label, q.spec,
                tkb_suite_peers[i].waiting_only ? "  (only where waiting is measured)" : "");
    }
}

int64_t tkb_peer_span_ns(const tkb_peer *p) {
    int64_t tick = 0, slots = 0;
    if (p->engine == NULL || (p->engine->caps & TK_QUEUE_CAP_TICKED) == 0 ||
        tk_queue_config_get_value(&p->qc, "tick", &tick) != TK_OK ||
        tk_queue_config_get_value(&p->qc, "slots", &slots) != TK_OK)
        return TKB_NS_PER_MS * 1024;
    int64_t pow2 = 1;
    while (pow2 < slots)
        pow2 <<= 1; /* the wheel rounds its size up to a power of two */
    return tick * pow2;
}

/* ---- style slots and display order ------------------------------------------ */
/* Where a family peer ranks among its engine's peers in this run: by its
 * parameters in table order, compared as numbers. */
static int compare_params(const tkb_peer *a, const tkb_peer *b) {
    for (size_t i = 0; i < a->engine->param_count; i++) {
        const tk_queue_param *prm = &a->engine->params[i];
        char va[64], vb[64];
        if (tk_queue_param_format(prm, &a->qc, va, sizeof va) != TK_OK ||
            tk_queue_param_format(prm, &b->qc, vb, sizeof vb) != TK_OK)
            continue;
        int c = strverscmp(va, vb);
        if (c != 0)
            return c;
    }
    return 0;
}

/* The slot of an engine peer without adapter parameters, before the mode:
 * its family's first slot plus its rank, or 0 (none of its own). */
static int family_slot(const tkb_peer *p, const tkb_peer *peers, size_t count) {
    const engine_peer *ep = engine_peer_of(p->engine);
    if (ep == NULL || has_adapter_params(p))
        return 0;
    int rank = 0;
    for (size_t i = 0; i < count; i++) {
        const tkb_peer *q = &peers[i];
        if (q->engine != p->engine || has_adapter_params(q) || compare_params(q, p) >= 0)
            continue;
        /* count each smaller parameter set once, whatever its mode */
        bool first = true;
        for (size_t j = 0; j < i; j++)
            if (peers[j].engine == q->engine && !has_adapter_params(&peers[j]) &&
                compare_params(&peers[j], q) == 0)
                first = false;
        rank += first;
    }
    return rank < ep->span ? ep->slot + rank : 0;
}

typedef struct arranged {
    tkb_peer p;
    int order; /* display order key */
    size_t index;
} arranged;

static int by_order(const void *a, const void *b) {
    const arranged *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void tkb_peer_arrange(tkb_peer *peers, size_t count) {
    arranged *a = calloc(count ? count : 1, sizeof *a);
    if (a == NULL)
        return; /* slots stay as parsed; order unchanged */
    int others = 0;
    for (size_t i = 0; i < count; i++) {
        tkb_peer *p = &peers[i];
        int base = p->engine != NULL ? family_slot(p, peers, count) : p->slot;
        if (base == 0) {
            p->slot = OTHER_SLOT + others++ % 3;
            a[i].order = 1000 + (int)i; /* after every family peer, in the order given */
        } else {
            /* an embedded variant: 12 slots on, right after its base in order */
            p->slot = p->embedded ? (base <= 4 ? base + 12 : OTHER_SLOT + others++ % 3) : base;
            a[i].order = base * 2 + p->embedded;
        }
        a[i].p = *p;
        a[i].index = i;
    }
    qsort(a, count, sizeof *a, by_order);
    for (size_t i = 0; i < count; i++)
        peers[i] = a[i].p;
    free(a);
}
