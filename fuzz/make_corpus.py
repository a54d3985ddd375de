#!/usr/bin/env python3
"""Regenerates the seed corpus of fuzz_engines (fuzz/corpus/). Deterministic.

Each seed is a small hand-shaped program in the format documented at the top
of fuzz_engines.c: two header bytes (tick/wheel choice, start choice), then
opcodes with operands. Run from anywhere: python3 fuzz/make_corpus.py
"""
import os
import random

ADD, REMOVE, ADV, JUMP, QUERY = 0, 3, 4, 6, 7
here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus")


def hdr(tick_choice, wheel_choice, start_choice, cap=0):
    return bytes([(tick_choice & 7) | ((wheel_choice & 7) << 3), (start_choice & 3) | ((cap & 63) << 2)])


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
seeds["empty"] = b""
seeds["header_only"] = hdr(7, 7, 3)

os.makedirs(out, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds written to %s" % (len(seeds), out))
