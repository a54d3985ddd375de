/* SPDX-License-Identifier: MIT */
/* timerkit: the core-model interpreter, shared by the differential fuzzer
 * (fuzz/fuzz_engines.c), its replayer (CTest fuzz_replay) and the
 * deterministic core-model test (fuzz/core-model-test.c, CTest core_model).
 *
 * tkm_run() decodes a byte string into a program of operations on simulated
 * time and runs it on the pure core (tk_core_ops, api/timerkit/engine.h) of
 * every registered engine that has one, all in lockstep, each checked after
 * every operation against a model of the core contract written in engine.h.
 * Nothing here names an engine: an engine added to the registry is driven
 * and checked with no other edit. Any departure from the contract prints the
 * engine, its parameters, the operation and its index, then abort()s.
 *
 * Input format (a missing byte reads as 0):
 *
 *   header, TKM_HEADER_SIZE bytes:
 *     byte 0    flags: TKM_FLAG_OWNER_RESIZE, TKM_FLAG_ALLOC_SWEEP
 *     byte 1    origin choice (the instant time starts at), taken mod 8
 *     byte 2    parameter mode, mod 4: 0 every parameter at its default,
 *               1 every one at its minimum, 2 and 3 each one chosen by a
 *               hash of the seed, the engine's name and the key
 *     byte 3    slack seed: varies the slack each node gets (a hash of its
 *               key and this byte: most 0, some tiny, about a tick, long,
 *               or reaching INT64_MAX; see world_slack() in core-model.c)
 *     bytes 4-11  the parameter seed (64 bits, little-endian)
 *   then operations of TKM_OP_SIZE bytes each: an opcode (mod 16, enum
 *   tkm_op) and four operand bytes a, b, c, d, whose meaning is given with
 *   each opcode below.
 *
 * Instants and deadlines are decoded from three operand bytes (kind, x, y)
 * into one of a few families (see decode_instant() and decode_deadline() in
 * core-model.c): steps of a few ns, microseconds, milliseconds, seconds,
 * powers of two up to 2^62 (far beyond any wheel's span), the deadlines of
 * the slots and their neighbours d-1, d+1, the due() instants and grid
 * points of each engine, next() of each engine, the origin and before it,
 * INT64_MAX, INT64_MIN/2 and INT64_MIN, and the deadline of another slot
 * (a tie, left in seq order). */
#ifndef TIMERKIT_FUZZ_CORE_MODEL_H
#define TIMERKIT_FUZZ_CORE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define TKM_HEADER_SIZE 12
#define TKM_OP_SIZE 5

/* Header byte 0. */
/* Cores with owner-driven resizing (tk_core_ops.resize) run in manual mode:
 * the harness calls resize->manual() after init() and follows wanted() as
 * the generic adapter does, a resize sometimes delivered a few operations
 * late, and grows the array when insert() answers TK_EFULL. */
#define TKM_FLAG_OWNER_RESIZE 0x01u
/* Before the real init(), init() is run with its first, second, ...
 * allocation failing, until it makes no more: each run must return TK_OK or
 * TK_ENOMEM with nothing left allocated. */
#define TKM_FLAG_ALLOC_SWEEP 0x02u

/* Opcodes (operation byte mod 16). A "slot" is one of TKM_SLOTS nodes, each
 * engine holding its own copy; operand bytes are a, b, c, d. */
enum tkm_op {
    TKM_OP_INSERT = 0,        /* slot a, deadline (b, c, d); a slot held is first checked
                                 (insert: TK_EINVAL) and removed */
    TKM_OP_INSERT_B = 1,      /* the same */
    TKM_OP_BURST = 2,         /* 1 + a % 16 inserts: slots b, b + s, ... (s = 1 + 2 * (c % 8)),
                                 deadlines (d, c + 17i, 13i) */
    TKM_OP_REMOVE = 3,        /* slot a: TK_OK if held, else TK_ENOENT */
    TKM_OP_ADVANCE = 4,       /* now := instant (a, b, c); expire(now, max d) */
    TKM_OP_ADVANCE_B = 5,     /* the same */
    TKM_OP_WALK = 6,          /* as ADVANCE, but first follow next() (latest() if d & 8 and the
                                 core has one) up to the instant, as the adapter's leader
                                 does, checking progress */
    TKM_OP_QUERY = 7,         /* count_due (limit a, instant (b, c, d)), remove of a node never
                                 inserted, insert of a held node (slot b) */
    TKM_OP_REMOVE_IF = 8,     /* pattern (a, b) over slots */
    TKM_OP_REMOVE_FIRST = 9,  /* first(), then remove() of it */
    TKM_OP_CANCEL = 10,       /* keep every (2 + a % 8)-th held node, remove the rest */
    TKM_OP_RESCHEDULE = 11,   /* 1 + a % 8 held slots from b (stride 7): inserted again,
                                 deadlines (c, d + 31k, k) */
    TKM_OP_INSERT_NOMEM = 12, /* as INSERT with every allocation failing: TK_OK, or
                                 TK_ENOMEM with core and node unchanged, then again */
    TKM_OP_DRAIN = 13,        /* remove_if() of every node */
    TKM_OP_CHECK = 14,        /* check() of every core */
    TKM_OP_STEP = 15,         /* now := the next grid point of engine a % engines after now
                                 (due(now + 1)) + (b % 3 - 1); expire(now, max c) */
    TKM_OP_COUNT = 16
};

/* Nodes (slots) per program. */
#define TKM_SLOTS 64

/* Per-engine counters, summed over the programs run with the same stats. */
typedef struct tkm_engine_stats {
    const char *name;    /* the engine's name (a static string of its table) */
    uint64_t programs;   /* programs run */
    uint64_t ops;        /* program operations applied to its core */
    uint64_t calls;      /* calls into its core (tk_core_ops) */
    uint64_t handed_out; /* nodes expire() and remove_if() handed back */
    uint64_t fallbacks;  /* programs whose parameter choice was refused (defaults used) */
    uint64_t resizes;    /* arrays moved by the harness (owner-driven resizing) */
} tkm_engine_stats;

#define TKM_MAX_ENGINES 64

typedef struct tkm_stats {
    size_t engines; /* entries of `engine` in use: one per engine with a core */
    tkm_engine_stats engine[TKM_MAX_ENGINES];
} tkm_stats;

/* Runs the program in data[0..size) on every registered engine with a core
 * and checks each against the model; abort()s on the first departure from
 * the contract, after a message on stderr. `stats` may be NULL; otherwise
 * the run's counters are added to it (zero it before the first run).
 * Returns the number of operations decoded. */
size_t tkm_run(const uint8_t *data, size_t size, tkm_stats *stats);

#endif
