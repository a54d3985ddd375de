#!/usr/bin/env python3
"""Regenerates the seed corpus of fuzz_engines (fuzz/corpus/). Deterministic.

Each seed is a small hand-shaped program in the format documented at the top
of fuzz_engines.c: two header bytes (tick/wheel choice, start choice), then
opcodes with operands. Run from anywhere: python3 fuzz/make_corpus.py
"""
import os
import random

ADD, REMOVE, ADV, JUMP, QUERY = 0, 3, 4, 6, 7
# heap-only operations and bursts; the wheel and the model follow them
POP, RESCHED, REMOVE_IF, DRAIN, MASS_CANCEL, BURST = 8, 9, 10, 11, 13, 14
OWNER = 0x20  # header byte 1: the harness resizes the heap as the adapter does
here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus")


def hdr(tick_choice, wheel_choice, start_choice, cap=0, owner=0):
    return bytes([(tick_choice & 7) | ((wheel_choice & 7) << 3), (start_choice & 3) | ((cap & 63) << 2) | owner])


def add(slot, d, extra=None):
    b = [ADD, slot, d]
    if extra is not None:
        b += extra
    return bytes(b)


def near(v):        # class 0: within ~16 ticks, off grid
    return v & 63


def grid(v):        # class 1: (v - 8) ticks
    return 64 | (v & 63)


def rounds(u16):    # class 2: u16 * tick / 2
    return [128, u16 & 255, u16 >> 8]


def edge(k):        # class 3: edge case k
    return 192 | (k & 15)


seeds = {}
# FIFO ties: many timers on one deadline, then expire.
for cfg in range(4):
    s = hdr(cfg, cfg + 1, cfg)
    for i in range(12):
        s += add(i, grid(10))
    s += bytes([ADV, 3, ADV, 3, ADV, 3, QUERY])
    seeds["fifo_ties_%d" % cfg] = s
# Add / remove / re-add the same slot.
for cfg in range(3):
    s = hdr(3 + cfg, 2, 1)
    for i in range(8):
        s += add(i, near(i * 7))
    s += bytes([REMOVE, 3, REMOVE, 5, REMOVE, 3]) + add(3, near(1)) + add(5, grid(9))
    s += bytes([QUERY, ADV, 3, ADV, 3, JUMP, 20, QUERY])
    seeds["add_remove_readd_%d" % cfg] = s
# Revolution boundaries: exactly one span, span +- 1, two spans.
for wc in range(7):  # wheel size choices 1, 2, 3, 8, 5, 64, 100
    s = hdr(wc % 8, wc, wc % 4)
    for i, k in enumerate([6, 7, 8, 9, 10, 4, 5, 12, 2, 3]):
        s += bytes([ADD, i, edge(k)])
    s += bytes([QUERY])
    for _ in range(6):
        s += bytes([ADV, 3, QUERY])
    s += bytes([JUMP, 0x80 | 9, QUERY])
    seeds["revolution_edges_wheel%d" % wc] = s
# Past and far-future deadlines, INT64_MAX.
s = hdr(4, 3, 2)
for i, k in enumerate([0, 1, 2, 3, 11, 13, 0, 1]):
    s += bytes([ADD, i, edge(k)] + ([7, 1] if k == 13 else []))
s += bytes([ADV, 0, QUERY, JUMP, 0xff, QUERY, REMOVE, 0, REMOVE, 6, QUERY])
seeds["extremes"] = s
# Multi-round timers then jumps over them.
for cfg in range(4):
    s = hdr(cfg * 2, 1 + cfg, cfg)
    for i in range(10):
        s += bytes([ADD, i] + rounds(37 * i + 5 * cfg + 1))
    s += bytes([QUERY, JUMP, 0x80 | 3, QUERY, JUMP, 0x80 | 40, QUERY, JUMP, 0x80 | 127, QUERY])
    seeds["rounds_jump_%d" % cfg] = s
# Interleaved add/advance, removals of expired nodes (ENOENT).
for cfg in range(3):
    s = hdr(cfg + 1, 4, 3)
    for i in range(16):
        s += add(i, near(i * 3)) + bytes([ADV, 0])
    for i in range(16):
        s += bytes([REMOVE, i])
    s += bytes([QUERY])
    seeds["interleave_expired_remove_%d" % cfg] = s
# Random but valid-looking programs.
rng = random.Random(20261122)
for n in range(12):
    s = hdr(rng.randrange(8), rng.randrange(8), rng.randrange(4), rng.randrange(64))
    for _ in range(rng.randrange(20, 120)):
        op = rng.choice([ADD, ADD, ADD, REMOVE, ADV, ADV, JUMP, QUERY])
        if op == ADD:
            s += bytes([ADD, rng.randrange(48), rng.randrange(256), rng.randrange(256), rng.randrange(256)])
        elif op in (REMOVE, ADV, JUMP):
            s += bytes([op, rng.randrange(256)])
        else:
            s += bytes([QUERY])
    seeds["random_%02d" % n] = s
# Removal paths: mass cancellation, cancel-and-reschedule, removals under the
# root and at the end, remove_if, drains, bursts into a small array, in both
# resizing modes (the heap resizing itself, or resized by the harness).
for owner in (0, OWNER):
    tag = "owner" if owner else "auto"
    # many timers, cancel most of them, then expire the rest
    s = hdr(3, 5, 1, 3, owner)
    for i in range(40):
        s += add(i, grid(9 + i % 30))
    s += bytes([MASS_CANCEL, 5, QUERY, ADV, 3, JUMP, 40, QUERY])
    seeds["mass_cancel_%s" % tag] = s
    # cancel-and-reschedule bursts: every removal's slot refilled at once
    s = hdr(1, 3, 0, 1, owner)
    for i in range(30):
        s += add(i, near(i * 2))
    for k in range(6):
        s += bytes([RESCHED, 7] + [(k * 11 + j * 5) % 48 for j in range(8)])
        s += bytes([POP, QUERY])
    s += bytes([JUMP, 30, QUERY])
    seeds["reschedule_%s" % tag] = s
    # removals that leave tombstones under the root, then pops bring them up
    s = hdr(4, 2, 2, 0, owner)
    for i in range(24):
        s += add(i, grid(10 + i))
    s += bytes([REMOVE, 1, REMOVE, 2, REMOVE, 3, REMOVE, 4, REMOVE, 23, REMOVE, 22])
    s += bytes([POP, QUERY, POP, QUERY, REMOVE_IF, 0x41, QUERY, DRAIN, QUERY])
    seeds["remove_root_and_tail_%s" % tag] = s
    # bursts of adds into a small array, removals between, remove_if, drain
    s = hdr(6, 4, 3, 0, owner)
    for k in range(5):
        s += bytes([BURST, 15])
        for j in range(16):
            s += bytes([(k * 16 + j) % 48, near(j * 37 + k)])
        s += bytes([REMOVE, (k * 7) % 48, REMOVE, (k * 7 + 3) % 48, REMOVE_IF, 0x80 | k])
        s += bytes([QUERY, ADV, 2])
    s += bytes([DRAIN, QUERY])
    seeds["bursts_%s" % tag] = s
    # a full array, two removals, two adds: the array must not grow
    s = hdr(3, 2, 0, 7, owner)
    for i in range(8):
        s += add(i, grid(10 + i))
    s += bytes([REMOVE, 5, REMOVE, 6]) + add(5, grid(20)) + add(6, grid(21))
    s += bytes([QUERY, JUMP, 30, QUERY])
    seeds["full_array_remove_add_%s" % tag] = s
rng = random.Random(20270301)
for n in range(8):
    s = hdr(rng.randrange(8), rng.randrange(8), rng.randrange(4), rng.randrange(64))
    for _ in range(rng.randrange(40, 160)):
        op = rng.choice([ADD, ADD, ADD, REMOVE, REMOVE, ADV, JUMP, QUERY, POP, RESCHED,
                         REMOVE_IF, DRAIN, MASS_CANCEL, BURST])
        if op == ADD:
            s += bytes([ADD, rng.randrange(48), rng.randrange(256), rng.randrange(256), rng.randrange(256)])
        elif op in (REMOVE, ADV, JUMP, REMOVE_IF, MASS_CANCEL):
            s += bytes([op, rng.randrange(256)])
        elif op == RESCHED:
            s += bytes([op, rng.randrange(256)] + [rng.randrange(48) for _ in range(8)])
        elif op == BURST:
            k = rng.randrange(8)
            s += bytes([op, k])
            for _ in range(k + 1):
                s += bytes([rng.randrange(48), rng.randrange(192), rng.randrange(256), rng.randrange(256)])
        else:
            s += bytes([op])
    seeds["heap_ops_random_%02d" % n] = s
seeds["empty"] = b""
seeds["header_only"] = hdr(7, 7, 3)

os.makedirs(out, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds written to %s" % (len(seeds), out))
