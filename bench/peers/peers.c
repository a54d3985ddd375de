/* SPDX-License-Identifier: MIT */
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
 * aliases of their specs.
 *
 * Every engine in the registry (tk_engine_count(), tk_engine_at()) is a peer,
 * and everything tkbench needs of it comes from its tables:
 *   - its description: its name and capabilities;
 *   - its core level: the generic core-level peer (tk-core.c) over its
 *     tk_core_ops, if it has a core (tk_queue_ops.core) and the spec sets no
 *     setting of the blocking adapter (TK_PARAM_ADAPTER: spin, max_pending),
 *     which change only how an executor's threads wait, not the core;
 *   - its executor level, always: tasks (tk-executor.c), or with @embedded
 *     the embedded timers (tk-embedded.c), whose hold-model loops ask
 *     whether a stopped timer may be started again when the engine can keep
 *     hold of a removed node (TK_QUEUE_CAP_DEFERRED_RELEASE);
 *   - its style slots, from its place in the registry (tkb_peer_arrange()).
 *
 * Two parameters are tkbench's, not the engine's (TKB_SLACK_KEY,
 * TKB_OS_SLACK_KEY): taken off the spec before the engine parses the rest,
 * written after the engine's in the canonical spec and the label
 * ("heap:slack=1ms", "heap-slack1ms"). `slack` is the window every timer of
 * the peer gets (tk_node.slack_ns), `os_slack` the Linux timer slack of the
 * executor's threads. A baseline has neither: naming one is an error. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params-internal.h"
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
#if TKB_HAVE_LIBEV
#define LIBEV_CORE &tkb_core_libev
#define LIBEV_SVC &tkb_svc_libev
#define LIBEV_MISSING NULL
#else
#define LIBEV_CORE NULL
#define LIBEV_SVC NULL
#define LIBEV_MISSING "libev not found at configure time"
#endif
#if TKB_HAVE_ASIO
#define ASIO_CORE &tkb_core_asio
#define ASIO_SVC &tkb_svc_asio
#define ASIO_MISSING NULL
#else
#define ASIO_CORE NULL
#define ASIO_SVC NULL
#define ASIO_MISSING "asio not found at configure time"
#endif

#define EMBEDDED_MODE "embedded"

/* Peers that are not engines of the library: the table of every baseline,
 * strawman and foreign peer, each in every suite (cli/run-select.c). A
 * foreign peer names its harness (`child`: peers/child.c runs it in a child
 * process; docs/child-protocol.md); adding one takes its harness, its build
 * rule (peers/<runtime>/peer.cmake) and its row here. */
typedef struct baseline {
    const char *name, *kind, *description;
    const tkb_core_peer_ops *core;
    const tkb_svc_ops *svc;
    size_t core_max_n;
    const char *missing; /* why this build has no core or svc for it */
    const char *child;   /* its harness ("jvm", "go", ...), or NULL: in process */
    const char *design;  /* "heap", "hashed wheel", "hierarchical wheel", "list", "" */
    int slot;
    bool named_only; /* runs only where --peers names it, in no suite (the tests' peers) */
} baseline;

#ifdef TKB_TEST_PEERS
#include TKB_TEST_PEERS /* defines TKB_TEST_PEER_ROWS: rows of the table below */
#else
#define TKB_TEST_PEER_ROWS
#endif

static const baseline baselines[] = {
    {.name = "libuv",
     .kind = "baseline",
     .description = "uv_timer_start/stop (Debian libuv1)",
     .core = UV_CORE,
     .svc = UV_SVC,
     .missing = UV_MISSING,
     .design = "heap",
     .slot = 5},
    {.name = "libevent",
     .kind = "baseline",
     .description = "evtimer_add/del (Debian libevent 2.1, default base)",
     .core = EV_CORE,
     .svc = EV_SVC,
     .missing = EV_MISSING,
     .design = "heap",
     .slot = 6},
    {.name = "libev",
     .kind = "baseline",
     .description = "ev_timer_start/stop (Debian libev 4.33, one loop)",
     .core = LIBEV_CORE,
     .svc = LIBEV_SVC,
     .missing = LIBEV_MISSING,
     .design = "heap",
     .slot = 23},
    {.name = "asio",
     .kind = "baseline",
     .description = "asio::steady_timer (Debian standalone asio 1.22, one io_context)",
     .core = ASIO_CORE,
     .svc = ASIO_SVC,
     .missing = ASIO_MISSING,
     .design = "heap",
     .slot = 24},
    {.name = "naive-heap",
     .kind = "strawman",
     .description = "binary heap, no index: linear-search cancel",
     .core = &tkb_core_naive_heap,
     .core_max_n = 100000,
     .design = "heap",
     .slot = 7},
    {.name = "sorted-list",
     .kind = "strawman",
     .description = "sorted doubly linked list",
     .core = &tkb_core_sorted_list,
     .core_max_n = 10000,
     .design = "list",
     .slot = 8},
    {.name = "floor",
     .kind = "floor",
     .description = "the machine's limits, measured in the same run",
     .design = "",
     .slot = 9},
    {.name = "jdk-stpe",
     .kind = "baseline",
     .description = "JDK 17 ScheduledThreadPoolExecutor, 1 thread (in a JVM)",
     .child = "jvm",
     .design = "heap",
     .slot = 17},
    {.name = "jdk-stpe-roc",
     .kind = "baseline",
     .description = "JDK 17 ScheduledThreadPoolExecutor, 1 thread, "
                    "setRemoveOnCancelPolicy(true) (in a JVM)",
     .child = "jvm",
     .design = "heap",
     .slot = 18},
    {.name = "netty-1ms",
     .kind = "baseline",
     .description = "Netty 4.1 HashedWheelTimer, tick 1 ms, 1024 slots (in a JVM)",
     .child = "jvm",
     .design = "hashed wheel",
     .slot = 19},
    {.name = "netty-100ms",
     .kind = "baseline",
     .description = "Netty 4.1 HashedWheelTimer, tick 100 ms, 512 slots (in a JVM)",
     .child = "jvm",
     .design = "hashed wheel",
     .slot = 20},
    {.name = "go-timers",
     .kind = "baseline",
     .description = "Go runtime timers: time.AfterFunc / Timer.Stop (Debian golang-go)",
     .child = "go",
     .design = "heap",
     .slot = 21},
    {.name = "tokio",
     .kind = "baseline",
     .description = "Tokio 1.x time driver, 1 worker thread: a spawned task per timer awaiting "
                    "sleep_until, cancel by JoinHandle::abort() (in a Rust process)",
     .child = "tokio",
     .design = "hierarchical wheel",
     .slot = 22},
    TKB_TEST_PEER_ROWS /* the test build's peers, after every real one */
};

/* The timer design of each engine of the tree, by name; an engine from
 * outside the tree has none ("") unless its name is here. */
static const struct {
    const char *engine, *design;
} engine_designs[] = {
    {"heap", "heap"},
    {"wheel", "hashed wheel"},
    {"hwheel", "hierarchical wheel"},
};

static const char *engine_design(const tk_queue_ops *ops) {
    for (size_t i = 0; i < TKB_COUNT(engine_designs); i++)
        if (strcmp(engine_designs[i].engine, ops->name) == 0)
            return engine_designs[i].design;
    return "";
}

size_t tkb_baseline_count(void) {
    return TKB_COUNT(baselines);
}

const char *tkb_baseline_in_suites(size_t i) {
    return i < TKB_COUNT(baselines) && !baselines[i].named_only ? baselines[i].name : NULL;
}

/* Why a baseline cannot run, or NULL. */
static const char *baseline_missing(const baseline *b) {
    return b->missing != NULL ? b->missing : b->child ? tkb_child_missing(b->child) : NULL;
}

static const baseline *baseline_find(const char *name, size_t len) {
    for (size_t i = 0; i < TKB_COUNT(baselines); i++)
        if (strlen(baselines[i].name) == len && strncmp(baselines[i].name, name, len) == 0)
            return &baselines[i];
    return NULL;
}

/* "hashed timing wheel with a tick thread (...); O(1) remove, ticked, own thread, ...": the
 * engine's own one-line description (or "timerkit engine NAME"), then its capabilities. */
static void engine_description(const tk_queue_ops *ops, char *buf, size_t len) {
    size_t k = ops->description != NULL
                   ? (size_t)snprintf(buf, len, "%s", ops->description)
                   : (size_t)snprintf(buf, len, "timerkit engine %s", ops->name);
    const char *sep = "; ";
    for (unsigned bit = 1; bit != 0 && k < len; bit <<= 1)
        if ((ops->caps & bit) != 0 && tk_queue_cap_name(bit) != NULL) {
            k += (size_t)snprintf(buf + k, len - k, "%s%s", sep, tk_queue_cap_name(bit));
            sep = ", ";
        }
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
 * for each other one the spec sets (parse_spec() then adds the slack and
 * "-embedded"). */
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

/* The slack parameters of tkbench (not the engine's), in the order the
 * canonical spec writes them. */
static const struct {
    const char *key;
    size_t offset; /* of the int64_t in tkb_peer */
    int64_t min;   /* smallest value allowed */
    const char *what;
} slack_params[] = {
    {TKB_SLACK_KEY, offsetof(tkb_peer, slack_ns), 0, "every timer's window (tk_node.slack_ns)"},
    {TKB_OS_SLACK_KEY, offsetof(tkb_peer, os_slack_ns), 1,
     "the Linux timer slack of the executor's threads (prctl(PR_SET_TIMERSLACK); at least 1ns: "
     "0 would restore the kernel's default)"},
};

static int64_t *slack_field(tkb_peer *p, size_t i) {
    return (int64_t *)(void *)((char *)p + slack_params[i].offset);
}

static int64_t slack_get(const tkb_peer *p, size_t i) {
    return *(const int64_t *)(const void *)((const char *)p + slack_params[i].offset);
}

/* Takes the slack parameters off body ("NAME:k=v,..."), into p, leaving the
 * engine's own; *named gets whether the spec had any. Returns 0, or -1 with
 * a message. */
static int take_slack(char *body, const char *spec, tkb_peer *p, bool *named, char *err,
                      size_t err_len) {
    *named = false;
    char *colon = strchr(body, ':');
    if (colon == NULL)
        return 0;
    char rest[TKB_SPEC_MAX] = "";
    size_t len = 0;
    bool seen[TKB_COUNT(slack_params)] = {false};
    for (char *save = NULL, *item = strtok_r(colon + 1, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        size_t klen = strcspn(item, "=");
        size_t i = 0;
        while (i < TKB_COUNT(slack_params) && (strlen(slack_params[i].key) != klen ||
                                               strncmp(slack_params[i].key, item, klen) != 0))
            i++;
        if (i == TKB_COUNT(slack_params)) { /* the engine's: kept */
            len += (size_t)snprintf(rest + len, sizeof rest - len, "%s%s", len ? "," : "", item);
            continue;
        }
        *named = true;
        int64_t v;
        if (seen[i])
            return fail(err, err_len, "%s: %s is given twice", spec, slack_params[i].key);
        seen[i] = true;
        if (item[klen] != '=' || tk__duration_parse(item + klen + 1, &v) != TK_OK ||
            v < slack_params[i].min) {
            char least[48] = "";
            if (slack_params[i].min > 0)
                snprintf(least, sizeof least, " of at least %lldns",
                         (long long)slack_params[i].min);
            if (err != NULL && err_len > 0)
                snprintf(err, err_len,
                         "%s: %s: '%s' is not a duration%s: DIGITS[.DIGITS] and a unit (ns, us, "
                         "ms, s), not negative, e.g. %s=1ms; %s is %s",
                         spec, slack_params[i].key, item[klen] == '=' ? item + klen + 1 : "", least,
                         slack_params[i].key, slack_params[i].key, slack_params[i].what);
            return -1;
        }
        *slack_field(p, i) = v;
    }
    if (rest[0] == '\0')
        *colon = '\0';
    else
        snprintf(colon + 1, TKB_SPEC_MAX - (size_t)(colon + 1 - body), "%s", rest);
    return 0;
}

/* Appends the peer's slack parameters set away from 0 to its canonical spec
 * (",slack=1ms", or ":slack=1ms" after an engine without parameters) and
 * label ("-slack1ms"). Returns 0, or -1 if either is too long. */
static int add_slack(tkb_peer *p, char *canon, size_t canon_len) {
    for (size_t i = 0; i < TKB_COUNT(slack_params); i++) {
        int64_t v = slack_get(p, i);
        if (v == 0)
            continue;
        char text[TK__DURATION_TEXT], key[32];
        tk__duration_text(v, text, sizeof text);
        size_t k = strlen(canon);
        if ((size_t)snprintf(canon + k, canon_len - k, "%s%s=%s", strchr(canon, ':') ? "," : ":",
                             slack_params[i].key, text) >= canon_len - k)
            return -1;
        size_t j = 0; /* the key without '_', as labels write keys */
        for (const char *c = slack_params[i].key; *c && j + 1 < sizeof key; c++)
            if (*c != '_')
                key[j++] = *c;
        key[j] = '\0';
        k = strlen(p->label);
        if ((size_t)snprintf(p->label + k, sizeof p->label - k, "-%s%s", key, text) >=
            sizeof p->label - k)
            return -1;
    }
    return 0;
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
    bool slack_named;
    if (take_slack(body, spec, p, &slack_named, err, err_len) != 0)
        return -1;
    if (b != NULL) {
        if (slack_named)
            return fail(err, err_len,
                        "%s: %s has no slack: " TKB_SLACK_KEY "= and " TKB_OS_SLACK_KEY
                        "= are for timerkit's engines (a timer's window, the executor's "
                        "threads' timer slack)",
                        spec, b->name);
        if (body[name_len] != '\0')
            return fail(err, err_len, "%s: %s takes no parameters", spec, b->name);
        if (p->embedded)
            return fail(err, err_len, "%s: only an engine has the mode @" EMBEDDED_MODE "%s", spec,
                        "");
        snprintf(p->spec, sizeof p->spec, "%s", b->name);
        snprintf(p->base, sizeof p->base, "%s", b->name);
        snprintf(p->id, sizeof p->id, "%s", b->name);
        snprintf(p->label, sizeof p->label, "%s", b->name);
        p->kind = b->kind;
        snprintf(p->description, sizeof p->description, "%s", b->description);
        p->core = b->core;
        p->svc = b->svc;
        p->core_max_n = b->core_max_n;
        p->missing = baseline_missing(b);
        p->slot = b->slot;
        p->child = b->child;
        p->design = b->design;
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
        fail(err, err_len, "unknown peer '%s'; known: %s", name, known);
        return TKB_PEER_UNKNOWN;
    }
    if (rc != TK_OK)
        return fail(err, err_len, "%s: %s", spec, msg);
    p->engine = ops;
    p->kind = "engine";
    p->design = engine_design(ops);
    char canon[TKB_SPEC_MAX];
    if (tk_queue_config_format(ops, &p->qc, canon, sizeof canon) != TK_OK)
        return fail(err, err_len, "%s: the canonical spec is too long%s", spec, "");
    engine_label(p);
    if (snprintf(p->base, sizeof p->base, "%s%s", canon, p->embedded ? "@" EMBEDDED_MODE : "") >=
            (int)sizeof p->base ||
        add_slack(p, canon, sizeof canon) != 0 ||
        snprintf(p->spec, sizeof p->spec, "%s%s", canon, p->embedded ? "@" EMBEDDED_MODE : "") >=
            (int)sizeof p->spec)
        return fail(err, err_len, "%s: the canonical spec is too long%s", spec, "");
    if (p->embedded) {
        size_t k = strlen(p->label);
        snprintf(p->label + k, sizeof p->label - k, "-%s", EMBEDDED_MODE);
    }
    snprintf(p->id, sizeof p->id, "%s", p->spec);
    engine_description(ops, p->description, sizeof p->description);
    if (p->embedded)
        p->svc = (ops->caps & TK_QUEUE_CAP_DEFERRED_RELEASE) != 0 ? &tkb_svc_executor_timer_deferred
                                                                  : &tkb_svc_executor_timer;
    else
        p->svc = &tkb_svc_executor;
    p->core = ops->core != NULL && !p->embedded && !has_adapter_params(p) && p->os_slack_ns == 0
                  ? &tkb_core_engine
                  : NULL;
    set_file(p);
    return 0;
}

int tkb_peer_with_slack(const tkb_peer *p, const char *key, int64_t ns, tkb_peer *out) {
    if (p->engine == NULL || ns < 0)
        return -1;
    char spec[TKB_SPEC_MAX * 2], text[TK__DURATION_TEXT];
    const char *at = strchr(p->base, '@');
    size_t len = at != NULL ? (size_t)(at - p->base) : strlen(p->base);
    size_t k = (size_t)snprintf(spec, sizeof spec, "%.*s", (int)len, p->base);
    for (size_t i = 0; i < TKB_COUNT(slack_params); i++) {
        int64_t v = strcmp(slack_params[i].key, key) == 0 ? ns : slack_get(p, i);
        if (v == 0)
            continue;
        tk__duration_text(v, text, sizeof text);
        k += (size_t)snprintf(spec + k, sizeof spec - k, "%s%s=%s",
                              memchr(spec, ':', k) != NULL ? "," : ":", slack_params[i].key, text);
    }
    if (at != NULL)
        snprintf(spec + k, sizeof spec - k, "%s", at);
    return parse_spec(spec, out, NULL, 0) == 0 ? 0 : -1;
}

int64_t tkb_peer_precision_ns(const tkb_peer *p) {
    if (p->engine == NULL)
        return -1;
    if ((p->engine->caps & TK_QUEUE_CAP_TICKED) == 0)
        return 0;
    int64_t tick;
    tk_queue_config qc = p->qc;
    if (qc.engine == NULL && tk_queue_config_init_for(&qc, p->engine) != TK_OK)
        return -1;
    return tk_queue_config_get_value(&qc, "tick", &tick) == TK_OK ? tick : -1;
}

int tkb_peer_parse(const char *spec, tkb_peer *p, char *err, size_t err_len) {
    int rc = parse_spec(spec, p, err, err_len);
    if (rc == 0)
        return 0;
    /* an alias: the label of one of the suites' peers */
    for (size_t i = 0; spec != NULL && i < tkb_suite_peer_count; i++) {
        tkb_peer q;
        if (parse_spec(tkb_suite_peers[i].spec, &q, NULL, 0) == 0 && strcmp(q.label, spec) == 0) {
            *p = q;
            return 0;
        }
    }
    return rc;
}

void tkb_peer_list(FILE *f) {
    fprintf(f, "peers (spec: NAME[:key=value,...][@%s]):\n", EMBEDDED_MODE);
    for (size_t i = 0; i < tk_engine_count(); i++) {
        const tk_queue_ops *ops = tk_engine_at(i);
        char desc[TKB_SPEC_MAX];
        engine_description(ops, desc, sizeof desc);
        tk_queue_config def;
        tk_queue_config_init(&def);
        fprintf(f, "  %-12s engine    %s; levels: %sexecutor; @%s: embedded timers\n", ops->name,
                desc, ops->core != NULL ? "core, " : "", EMBEDDED_MODE);
        for (size_t k = 0; k < ops->param_count; k++) {
            const tk_queue_param *prm = &ops->params[k];
            char v[64];
            if (tk_queue_param_format(prm, &def, v, sizeof v) != TK_OK)
                snprintf(v, sizeof v, "?");
            fprintf(f, "    %-12s %s (default %s%s)\n", prm->key, prm->help, v,
                    (prm->flags & TK_PARAM_ADAPTER) != 0 ? "; executor level only" : "");
        }
    }
    fprintf(f, "  tkbench's own parameters, for any engine (no engine's table has them):\n");
    for (size_t i = 0; i < TKB_COUNT(slack_params); i++)
        fprintf(f, "    %-12s %s (default 0: none)\n", slack_params[i].key, slack_params[i].what);
    for (size_t i = 0; i < TKB_COUNT(baselines); i++) {
        const baseline *b = &baselines[i];
        const char *missing = baseline_missing(b);
        fprintf(f, "  %-12s %-9s %s%s%s%s%s%s%s\n", b->name, b->kind, b->description,
                b->child ? "  [harness " : "", b->child ? b->child : "", b->child ? "]" : "",
                missing ? "  [cannot run: " : "", missing ? missing : "", missing ? "]" : "");
    }
    fprintf(f, "default peers of every suite (alias = spec):\n");
    for (size_t i = 0; i < tkb_suite_peer_count; i++) {
        tkb_peer q;
        char err[256];
        int rc = parse_spec(tkb_suite_peers[i].spec, &q, err, sizeof err);
        if (rc != 0) {
            fprintf(f, "  %-26s   (%s)\n", tkb_suite_peers[i].spec,
                    rc == TKB_PEER_UNKNOWN ? "skipped: no such engine in this build" : err);
            continue;
        }
        fprintf(f, "  %-26s = %s%s\n", q.label, q.spec,
                tkb_suite_peers[i].waiting_only ? "  (only where waiting is measured)" : "");
    }
    fprintf(f,
            "  and every other registered engine at its defaults, as NAME and NAME@%s, and "
            "every peer of the table above that can run\n",
            EMBEDDED_MODE);
}

/* ---- style slots and display order ------------------------------------------
 *
 * plots/style.gp has TKB_SLOTS style slots (colour, dash, point, fill). A
 * baseline keeps its own (5-9; the JVM peers 17-20; 21-24 are go-timers,
 * tokio, libev and asio's). The engines' peers share the others, by
 * parameter set: the engine and its parameters except the blocking
 * adapter's, which a task peer and its @embedded variant have in common.
 *   - Each parameter set in the run takes a slot. Engine k of the registry
 *     (k = 0, 1, ...; engines/CMakeLists.txt's order, then run-time
 *     registrations) owns slot k + 1 for its first set if k < 4, so an
 *     engine keeps its colour whatever else runs. An engine's further sets
 *     take, in this order, the free slots of 1-4 that no registered engine
 *     owns, then 10-12, then those of 1-4 whose engine is not in the run.
 *   - The @embedded variant of a set in slot s <= 4 takes s + 12: a colour of
 *     its own and the point shape of slot s.
 *   - Any other peer (a spinning variant, a peer with a slack, the @embedded variant of a set in
 *     10-12, a peer this tkbench does not know) takes a free slot: 10-12
 *     first, then any. Only when all TKB_SLOTS are taken do slots repeat
 *     (10-12).
 * An engine's sets rank by how many parameters they set away from the
 * default (the engine's defaults first), then by their values in table
 * order. Display order: engine by engine in registry order, each set's task
 * peer then its @embedded variant, then the engine's spinning variants; then
 * the baselines; then peers this tkbench does not know, as given. */

#define FAMILY_SLOTS 4    /* slots 1-4: the engines' parameter sets */
#define EMBEDDED_SHIFT 12 /* slots 13-16: the @embedded variants of slots 1-4 */

static size_t engine_index(const tk_queue_ops *ops) {
    size_t n = tk_engine_count();
    for (size_t i = 0; i < n; i++)
        if (tk_engine_at(i) == ops)
            return i;
    return n;
}

/* Compares parameter prm of two configs of one engine, as numbers when both
 * are representable, else as written. */
static int compare_param(const tk_queue_param *prm, const tk_queue_config *a,
                         const tk_queue_config *b) {
    int64_t va, vb;
    if (tk_queue_config_get_value(a, prm->key, &va) == TK_OK &&
        tk_queue_config_get_value(b, prm->key, &vb) == TK_OK)
        return va < vb ? -1 : va > vb;
    char sa[64], sb[64];
    if (tk_queue_param_format(prm, a, sa, sizeof sa) != TK_OK ||
        tk_queue_param_format(prm, b, sb, sizeof sb) != TK_OK)
        return 0;
    return strverscmp(sa, sb);
}

/* The parameter-set order of two peers of one engine (adapter settings
 * aside): fewer parameters away from the default first, then by value. */
static int compare_sets(const tkb_peer *a, const tkb_peer *b) {
    const tk_queue_ops *e = a->engine;
    int da = 0, db = 0;
    for (size_t i = 0; i < e->param_count; i++)
        if ((e->params[i].flags & TK_PARAM_ADAPTER) == 0) {
            da += param_set(&e->params[i], &a->qc);
            db += param_set(&e->params[i], &b->qc);
        }
    if (da != db)
        return da < db ? -1 : 1;
    for (size_t i = 0; i < e->param_count; i++) {
        if ((e->params[i].flags & TK_PARAM_ADAPTER) != 0)
            continue;
        int c = compare_param(&e->params[i], &a->qc, &b->qc);
        if (c != 0)
            return c;
    }
    return 0;
}

/* A peer that belongs to a parameter set: an engine's, without adapter
 * settings. */
static bool in_set(const tkb_peer *p) {
    return p->engine != NULL && !has_adapter_params(p) && p->slack_ns == 0 && p->os_slack_ns == 0;
}

int tkb_peer_engine_reference(const tk_queue_ops *e, bool embedded, tkb_peer *out) {
    tkb_peer p;
    bool found = false;
    for (size_t i = 0; i < tkb_suite_peer_count && !found; i++)
        found = !tkb_suite_peers[i].waiting_only &&
                tkb_peer_parse(tkb_suite_peers[i].spec, &p, NULL, 0) == 0 && p.engine == e &&
                in_set(&p) && !p.embedded;
    if (!found && tkb_peer_parse(e->name, &p, NULL, 0) != 0)
        return -1;
    if (!embedded) {
        *out = p;
        return 0;
    }
    char spec[TKB_SPEC_MAX + 16];
    snprintf(spec, sizeof spec, "%s@%s", p.spec, EMBEDDED_MODE);
    return tkb_peer_parse(spec, out, NULL, 0) == 0 ? 0 : -1;
}

size_t tkb_frontier_bases(tkb_peer *out, size_t cap) {
    size_t k = 0;
    tkb_peer p;
    for (size_t i = 0; i < tkb_suite_peer_count; i++)
        if (tkb_suite_peers[i].frontier &&
            tkb_peer_parse(tkb_suite_peers[i].spec, &p, NULL, 0) == 0)
            if (k++ < cap)
                out[k - 1] = p;
    for (size_t e = 0; e < tk_engine_count(); e++) {
        bool named = false;
        for (size_t i = 0; i < tkb_suite_peer_count && !named; i++)
            named = tkb_suite_peers[i].frontier &&
                    tkb_peer_parse(tkb_suite_peers[i].spec, &p, NULL, 0) == 0 &&
                    p.engine == tk_engine_at(e);
        if (!named && tkb_peer_engine_reference(tk_engine_at(e), false, &p) == 0 && k++ < cap)
            out[k - 1] = p;
    }
    return k;
}

typedef struct arranged {
    tkb_peer p;
    size_t engine;  /* registry index (engine peers) */
    size_t set;     /* index of the first peer of its parameter set (in_set) */
    size_t setrank; /* a set's first peer: the set's position among the run's sets */
    int setslot;    /* a set's first peer: the set's slot */
    long long order;
    size_t index;
} arranged;

/* qsort context is not portable: the sets are sorted through this. */
static const arranged *g_sets_of;

static int by_set(const void *a, const void *b) {
    const arranged *x = &g_sets_of[*(const size_t *)a], *y = &g_sets_of[*(const size_t *)b];
    if (x->engine != y->engine)
        return x->engine < y->engine ? -1 : 1;
    int c = compare_sets(&x->p, &y->p);
    return c != 0 ? c : (x->index < y->index ? -1 : x->index > y->index);
}

static int by_order(const void *a, const void *b) {
    const arranged *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The first slot of `order` (count entries) not used yet, marked used; 0 if
 * none. */
static int take_slot(bool *used, const int *order, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (order[i] >= 1 && order[i] <= TKB_SLOTS && !used[order[i]]) {
            used[order[i]] = true;
            return order[i];
        }
    return 0;
}

/* A free slot for a peer outside the families' rules: 10-12, then any, then
 * 10-12 again (a repeat). */
static int other_slot(bool *used, int *cycle) {
    static const int order[] = {10, 11, 12, 1, 2,  3,  4,  13, 14, 15, 16, 5,
                                6,  7,  8,  9, 17, 18, 19, 20, 21, 22, 23, 24};
    _Static_assert(TKB_COUNT(order) == TKB_SLOTS, "other_slot's order lists every slot");
    int s = take_slot(used, order, TKB_COUNT(order));
    return s != 0 ? s : 10 + (*cycle)++ % 3;
}

/* Copies the peers into a and groups the engines' peers into parameter sets
 * (in_set): sets[0..n) get the index of each set's first peer, in registry
 * and parameter order; a baseline's own slot is marked used. Returns n. */
static size_t group_sets(arranged *a, size_t *sets, const tkb_peer *peers, size_t count,
                         bool *used) {
    size_t nsets = 0;
    for (size_t i = 0; i < count; i++) {
        a[i].p = peers[i];
        a[i].index = i;
        if (peers[i].engine == NULL) {
            if (peers[i].slot >= 1 && peers[i].slot <= TKB_SLOTS)
                used[peers[i].slot] = true; /* a baseline's own */
            continue;
        }
        a[i].engine = engine_index(peers[i].engine);
        a[i].set = i;
        if (!in_set(&peers[i]))
            continue;
        for (size_t j = 0; j < i; j++)
            if (in_set(&peers[j]) && peers[j].engine == peers[i].engine &&
                compare_sets(&peers[j], &peers[i]) == 0) {
                a[i].set = a[j].set;
                break;
            }
        if (a[i].set == i)
            sets[nsets++] = i;
    }
    g_sets_of = a;
    qsort(sets, nsets, sizeof *sets, by_set);
    g_sets_of = NULL;
    return nsets;
}

/* The sets' slots: each engine's first set in the slot it owns, then the
 * others from the free slots of 1-4 (owned by no engine, or by an engine
 * not in the run) and 10-12, then any. */
static void set_slots(arranged *a, const size_t *sets, size_t nsets, bool *used, int *cycle) {
    size_t nengines = tk_engine_count();
    int further[2 * FAMILY_SLOTS + 3], nfurther = 0;
    bool engine_in_run[FAMILY_SLOTS] = {false};
    for (size_t k = 0; k < nsets; k++)
        if (a[sets[k]].engine < FAMILY_SLOTS)
            engine_in_run[a[sets[k]].engine] = true;
    for (int s = 1; s <= FAMILY_SLOTS; s++)
        if ((size_t)(s - 1) >= nengines)
            further[nfurther++] = s; /* owned by no engine */
    for (int s = 10; s <= 12; s++)
        further[nfurther++] = s;
    for (int s = 1; s <= FAMILY_SLOTS; s++)
        if ((size_t)(s - 1) < nengines && !engine_in_run[s - 1])
            further[nfurther++] = s; /* its engine is not in the run */
    for (size_t k = 0; k < nsets; k++) {
        arranged *x = &a[sets[k]];
        x->setrank = k;
        if ((k == 0 || a[sets[k - 1]].engine != x->engine) && x->engine < FAMILY_SLOTS)
            used[x->setslot = (int)x->engine + 1] = true;
    }
    for (size_t k = 0; k < nsets; k++) {
        arranged *x = &a[sets[k]];
        if (x->setslot == 0)
            x->setslot = take_slot(used, further, (size_t)nfurther);
        if (x->setslot == 0)
            x->setslot = other_slot(used, cycle);
    }
}

/* Every peer's slot and display order: a set's task peer takes the set's
 * slot, its embedded variant the slot EMBEDDED_SHIFT above; the others, and
 * peers this tkbench does not know, what is left. */
static void peer_slots(arranged *a, size_t count, bool *used, int *cycle) {
    for (size_t i = 0; i < count; i++) {
        arranged *x = &a[i];
        tkb_peer *p = &x->p;
        if (p->engine == NULL) {
            if (p->slot < 1 || p->slot > TKB_SLOTS)
                p->slot = 0; /* a peer this tkbench does not know */
            x->order = p->slot != 0 ? 2000000000LL + p->slot * 100000LL + (long long)i
                                    : 3000000000LL + (long long)i;
            continue;
        }
        long long engine_order = (long long)(x->engine + 1) * 10000000LL;
        if (!in_set(p)) {
            p->slot = 0;
            x->order = engine_order + 5000000LL + (long long)i; /* after the engine's sets */
            continue;
        }
        x->order = engine_order + (long long)a[x->set].setrank * 2 + p->embedded;
        int s = a[x->set].setslot;
        if (!p->embedded)
            p->slot = s; /* a set has one task peer: the spec names it */
        else if (s >= 1 && s <= FAMILY_SLOTS && !used[s + EMBEDDED_SHIFT])
            used[p->slot = s + EMBEDDED_SHIFT] = true;
        else
            p->slot = 0;
    }
    for (size_t i = 0; i < count; i++)
        if (a[i].p.slot == 0)
            a[i].p.slot = other_slot(used, cycle);
}

void tkb_peer_arrange(tkb_peer *peers, size_t count) {
    arranged *a = calloc(count ? count : 1, sizeof *a);
    size_t *sets = calloc(count ? count : 1, sizeof *sets);
    if (a == NULL || sets == NULL) {
        free(a);
        free(sets);
        return; /* slots stay as parsed; order unchanged */
    }
    bool used[TKB_SLOTS + 1] = {false};
    int cycle = 0;
    size_t nsets = group_sets(a, sets, peers, count, used);
    set_slots(a, sets, nsets, used, &cycle);
    peer_slots(a, count, used, &cycle);
    qsort(a, count, sizeof *a, by_order);
    for (size_t i = 0; i < count; i++)
        peers[i] = a[i].p;
    free(a);
    free(sets);
}
