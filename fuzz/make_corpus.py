#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerates the seed corpus of the engine fuzzer (fuzz/corpus/). Deterministic.

Each seed is a program for the core-model interpreter, in the format written
at the top of fuzz/core-model.h: a header (flags, origin, parameter mode,
parameter seed), then operations of five bytes (opcode, a, b, c, d). The
opcodes, flags and sizes are read from core-model.h itself, so this script
follows the interpreter. No engine is named here: every program runs on every
registered engine's core, and the parameter seeds below are many, so that
each engine's parameters take each of their choices (default, minimum, just
above it, a value between, maximum) in some seed.

Run from anywhere: python3 fuzz/make_corpus.py   (old seeds are deleted first)
"""
import os
import random
import re

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus")

# ---- constants from core-model.h -------------------------------------------------
with open(os.path.join(here, "core-model.h")) as f:
    header_text = f.read()
OP = {m.group(1): int(m.group(2)) for m in re.finditer(r"TKM_OP_([A-Z_]+) = (\d+)", header_text)}
FLAG = {m.group(1): int(m.group(2), 16)
        for m in re.finditer(r"#define TKM_FLAG_([A-Z_]+) 0x([0-9a-fA-F]+)u", header_text)}
HEADER_SIZE = int(re.search(r"#define TKM_HEADER_SIZE (\d+)", header_text).group(1))
OP_SIZE = int(re.search(r"#define TKM_OP_SIZE (\d+)", header_text).group(1))
SLOTS = int(re.search(r"#define TKM_SLOTS (\d+)", header_text).group(1))
for name in ("INSERT", "BURST", "REMOVE", "ADVANCE", "WALK", "QUERY", "REMOVE_IF", "REMOVE_FIRST",
             "CANCEL", "RESCHEDULE", "INSERT_NOMEM", "DRAIN", "CHECK", "STEP", "COUNT"):
    assert name in OP, "core-model.h has no TKM_OP_" + name
assert HEADER_SIZE == 12 and OP_SIZE == 5, "the header layout below assumes 12 + 5-byte ops"

OWNER = FLAG["OWNER_RESIZE"]
SWEEP = FLAG["ALLOC_SWEEP"]
# deadline kinds (decode_deadline, byte mod 14) and instant kinds (decode_instant, mod 12)
D_NS, D_US, D_10US, D_MS, D_POW2, D_ORIGIN, D_BEFORE, D_MAX, D_LOW, D_TIE, D_NEAR_TIE, \
    D_GRID, D_LATE, D_MB = range(14)
T_SAME, T_NS, T_US, T_100US, T_POW2, T_DEADLINE, T_DUE, T_GRID, T_NEXT, T_END, T_SMALLEST, \
    T_MS = range(12)
MAX_ALL, MAX_1, MAX_2, MAX_3 = 0, 1, 2, 3


def hdr(flags=0, origin=0, mode=0, seed=0):
    return bytes([flags, origin, mode, 0]) + seed.to_bytes(8, "little")


def op(code, a=0, b=0, c=0, d=0):
    return bytes([OP[code], a & 255, b & 255, c & 255, d & 255])


def insert(slot, kind, x=0, y=0):
    return op("INSERT", slot, kind, x, y)


def advance(kind, x=0, y=0, mx=MAX_ALL):
    return op("ADVANCE", kind, x, y, mx)


def walk(kind, x=0, y=0, mx=MAX_ALL):
    return op("WALK", kind, x, y, mx)


QUERY = op("QUERY", 6, T_NS, 3, 0) + op("QUERY", 1, T_POW2, 40, 0)
CHECK = op("CHECK")

seeds = {}


def mixed(rng, n):
    """A program touching every opcode, operands from rng."""
    s = b""
    for i in range(n):
        code = i % OP["COUNT"] if i < OP["COUNT"] else rng.randrange(OP["COUNT"])
        s += bytes([code] + [rng.randrange(256) for _ in range(4)])
    return s


# Parameters: many seeds in hashed mode (2), plus defaults (0) and minima (1),
# each with a program that inserts over a spread of deadlines and walks time.
base = b""
for i, kind in enumerate([D_NS, D_US, D_10US, D_MS, D_POW2, D_GRID, D_TIE, D_LATE, D_MB]):
    for j in range(3):
        base += insert(i * 3 + j, kind, 17 * j + i, 5 * j)
base += QUERY + walk(T_100US, 3, 0, MAX_3) + walk(T_MS, 40, 0) + CHECK
base += walk(T_POW2, 36, 0, MAX_2) + walk(T_POW2, 50, 0) + QUERY
for mode in (0, 1):
    for owner in (0, OWNER):
        seeds["params_mode%d%s" % (mode, "_owner" if owner else "")] = hdr(owner, 0, mode) + base
for k in range(24):
    seeds["params_hashed_%02d" % k] = hdr(OWNER if k % 2 else 0, k % 8, 2, 0x9E3779B97F4A7C15 * (k + 1) % 2**64) + base

# Every deadline kind, then time moved to each slot's deadline, its due()
# and the next grid point, with small maxima.
for kind in range(14):
    s = hdr(0, kind % 8, 2, 1000 + kind)
    for i in range(8):
        s += insert(i, kind, 31 * i + 3, 7 * i)
    for i in range(8):
        s += walk(T_DEADLINE, i, 0, MAX_1) + advance(T_DUE, i, 1, MAX_2) + op("STEP", i, 2, MAX_1)
    s += QUERY + advance(T_END, 0) + QUERY
    seeds["deadline_kind_%02d" % kind] = s

# Every instant kind, from a held set of nodes.
for kind in range(12):
    s = hdr(OWNER if kind % 2 else 0, (kind * 3) % 8, 2, 2000 + kind)
    s += op("BURST", 15, 0, 3, D_10US) + op("BURST", 15, 16, 5, D_MS) + op("BURST", 7, 32, 1, D_GRID)
    for x in (0, 1, 2, 7, 40, 200):
        s += advance(kind, x, x // 3, x % 4) + walk(kind, x + 1, x % 3, MAX_2)
    s += QUERY + CHECK
    seeds["instant_kind_%02d" % kind] = s

# FIFO ties: many nodes on one deadline and on one grid point.
for origin in range(4):
    s = hdr(0, origin, 2, 3000 + origin) + insert(0, D_US, 5, 0)
    for i in range(1, 24):
        s += insert(i, D_TIE, 0)
    for i in range(24, 40):
        s += insert(i, D_GRID, 1, 9)
    s += advance(T_DEADLINE, 0, 0, MAX_3) + advance(T_DEADLINE, 0, 1, MAX_1) + walk(T_DUE, 24, 1, MAX_2)
    s += op("REMOVE_FIRST") + QUERY + walk(T_POW2, 62, 0, MAX_ALL)
    seeds["fifo_ties_%d" % origin] = s

# Remove, re-add, remove what was handed out (TK_ENOENT), insert a held node (TK_EINVAL).
s = hdr(0, 1, 0)
for i in range(12):
    s += insert(i, D_US, 3 * i, i)
s += op("REMOVE", 3) + op("REMOVE", 5) + op("REMOVE", 3) + insert(3, D_NS, 1) + insert(5, D_GRID, 2, 4)
s += insert(5, D_TIE, 5) + op("QUERY", 2, 5, T_US, 9) + walk(T_US, 20, 0, MAX_2)
for i in range(12):
    s += op("REMOVE", i)
s += QUERY + CHECK
seeds["remove_readd"] = s

# Removal paths: remove_if patterns, remove_first, cancel, reschedule, drain.
for owner in (0, OWNER):
    tag = "owner" if owner else "self"
    s = hdr(owner, 2, 1)  # minima: the smallest arrays, many resizes
    for k in range(4):
        s += op("BURST", 15, 16 * k, 2 * k + 1, [D_US, D_MS, D_GRID, D_TIE][k])
    s += op("REMOVE_IF", 0, 0x03) + op("REMOVE_IF", 1, 0x08) + op("REMOVE_IF", 2, 0x1c) + QUERY
    s += op("CANCEL", 1) + op("REMOVE_FIRST") + op("REMOVE_FIRST") + CHECK
    s += op("RESCHEDULE", 7, 0, D_NS, 0) + op("RESCHEDULE", 7, 3, D_LATE, 9) + QUERY
    s += op("BURST", 15, 5, 7, D_POW2) + op("DRAIN") + QUERY
    s += op("BURST", 15, 9, 3, D_10US) + op("CANCEL", 7) + walk(T_100US, 200, 0, MAX_3) + CHECK
    seeds["removals_%s" % tag] = s

# Allocation failures: the init sweep, and inserts whose allocation fails,
# growing from the smallest array in both resizing modes.
for owner in (0, OWNER):
    s = hdr(SWEEP | owner, 3, 1)
    for i in range(40):
        s += op("INSERT_NOMEM", i, D_US, i, i)
    s += QUERY + op("CANCEL", 3) + op("INSERT_NOMEM", 41, D_LATE, 3) + walk(T_MS, 50) + CHECK
    seeds["nomem_%s" % ("owner" if owner else "self")] = s

# The edges of time: origins near INT64_MAX and INT64_MIN/2, deadlines at both
# ends, time run to the end.
for origin in (5, 6, 4, 7):
    s = hdr(0, origin, 2, 4000 + origin)
    for i, (kind, x) in enumerate([(D_MAX, 0), (D_MAX, 1), (D_MAX, 3), (D_LOW, 0), (D_LOW, 1),
                                   (D_LOW, 2), (D_LOW, 3), (D_BEFORE, 62), (D_BEFORE, 10),
                                   (D_ORIGIN, 0), (D_ORIGIN, 255), (D_POW2, 62), (D_POW2, 61)]):
        s += insert(i, kind, x, 7)
    s += QUERY + walk(T_POW2, 62, 0, MAX_2) + QUERY + advance(T_END, 0, 0, MAX_1)
    s += advance(T_END, 0, 0, MAX_ALL) + insert(20, D_MAX, 2) + insert(21, D_NS, 1) + QUERY + CHECK
    seeds["time_edges_origin%d" % origin] = s

# Small steps on the grid: a node on each of the next grid points, time moved
# one grid point at a time, just before and after.
for mode in (0, 1, 2):
    s = hdr(0, 2, mode, 5000 + mode)
    for i in range(16):
        s += insert(i, D_GRID + 14 * (i % 3), i, i * 16)
    for i in range(24):
        s += op("STEP", i, i % 3, i % 4)
    s += walk(T_NEXT, 0, 1) + walk(T_NEXT, 1, 2, MAX_1) + QUERY
    seeds["grid_steps_mode%d" % mode] = s

# Random programs over every opcode.
rng = random.Random(20261126)
for n in range(16):
    flags = rng.choice([0, 0, OWNER, SWEEP, OWNER | SWEEP])
    s = hdr(flags, rng.randrange(8), rng.randrange(4), rng.getrandbits(64))
    seeds["random_%02d" % n] = s + mixed(rng, rng.randrange(30, 200))

seeds["empty"] = b""
seeds["header_only"] = hdr(OWNER | SWEEP, 3, 2, 12345)

os.makedirs(out, exist_ok=True)
for name in os.listdir(out):
    os.remove(os.path.join(out, name))
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds written to %s" % (len(seeds), out))
