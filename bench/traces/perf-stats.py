#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarises a `perf script` text of timer tracepoints (plain or .xz).

    bench/traces/perf-stats.py [--top N] FILE...

For each file: events per type, the functions behind the events (a cancel or
an expiry is charged to the function of the timer's last start, since
timer_cancel and hrtimer_cancel name only the address), and a few checks
that matter when the trace is replayed:
  - how many expiries come right after a cancel of the same timer on the
    same CPU (the kernel detaches a timer before it runs it, and the
    detach is traced as a cancel);
  - how many starts re-arm a timer that is still armed (a cancel event
    just before, or hrtimer_start's was_armed=1);
  - hrtimer deadlines that are far from the event's own time (another clock
    base: CLOCK_REALTIME or CLOCK_TAI timers have expires in wall time);
  - timestamps that go backwards.
The timestamps are whatever perf recorded; bench/traces/record.sh records
with CLOCK_MONOTONIC, the clock of the hrtimers' expires= fields.

Python 3 standard library only. This is a look at the data, not the
project's importer.
"""

import argparse
import collections
import lzma
import re
import sys

# "comm tid [cpu] seconds.frac: timer:event: fields..."; comm may hold blanks
LINE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<tid>-?\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<t>\d+\.\d+):\s+timer:(?P<ev>\w+):\s*(?P<rest>.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def open_text(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt", errors="replace")
    return open(path, "rt", errors="replace")


def to_ns(t):
    sec, _, frac = t.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def summarise(path, top):
    per_event = collections.Counter()
    per_func = collections.Counter()  # (event, function)
    func_total = collections.Counter()
    comm_total = collections.Counter()
    func_of = {}  # address -> function of its last start
    last_on_cpu = {}  # cpu -> (event, address) of the previous event there
    expire_after_cancel = collections.Counter()  # "timer"/"hrtimer" -> n
    expires_total = collections.Counter()
    rearm = collections.Counter()
    starts = collections.Counter()
    far_deadline = collections.Counter()  # function -> n
    bad = 0
    backwards = 0
    max_back_ns = 0
    prev_ns = None
    first_ns = last_ns = None
    n = 0
    with open_text(path) as f:
        for raw in f:
            m = LINE.match(raw)
            if not m:
                bad += 1
                continue
            n += 1
            ev, cpu = m.group("ev"), m.group("cpu")
            t_ns = to_ns(m.group("t"))
            if first_ns is None:
                first_ns = t_ns
            last_ns = t_ns
            if prev_ns is not None and t_ns < prev_ns:
                backwards += 1
                max_back_ns = max(max_back_ns, prev_ns - t_ns)
            prev_ns = t_ns if prev_ns is None else max(prev_ns, t_ns)
            fields = dict(FIELD.findall(m.group("rest")))
            kind = "hrtimer" if ev.startswith("hrtimer") else "timer"
            addr = fields.get(kind, "?")
            func = fields.get("function")
            if ev.endswith("_start") and func:
                func_of[addr] = func
            if func is None:
                func = func_of.get(addr, "(unknown: first seen before its start)")
            per_event[ev] += 1
            per_func[(ev, func)] += 1
            func_total[func] += 1
            comm_total[m.group("comm")] += 1
            prev = last_on_cpu.get(cpu)
            if ev.endswith("_expire_entry"):
                expires_total[kind] += 1
                if prev == (kind + "_cancel", addr):
                    expire_after_cancel[kind] += 1
            if ev.endswith("_start"):
                starts[kind] += 1
                if prev == (kind + "_cancel", addr) or fields.get("was_armed") == "1":
                    rearm[kind] += 1
                if kind == "hrtimer" and "expires" in fields:
                    try:
                        if abs(int(fields["expires"]) - t_ns) > 3600 * 1_000_000_000:
                            far_deadline[func] += 1
                    except ValueError:
                        pass
            last_on_cpu[cpu] = (ev, addr)

    print("== %s" % path)
    span = (last_ns - first_ns) / 1e9 if n else 0.0
    print("events %d over %.3f s (%d lines not understood)" % (n, span, bad))
    print("per event:")
    for ev, c in per_event.most_common():
        print("  %9d  %s" % (c, ev))
    print("top functions (all their events):")
    for func, c in func_total.most_common(top):
        parts = ", ".join("%s %d" % (ev, per_func[(ev, func)]) for ev in sorted(per_event) if per_func[(ev, func)])
        print("  %9d  %-28s %s" % (c, func, parts))
    print("top tasks the events happened in (comm):")
    for comm, c in comm_total.most_common(min(top, 8)):
        print("  %9d  %s" % (c, comm))
    for kind in ("timer", "hrtimer"):
        if expires_total[kind]:
            print("%s expiries right after a cancel of the same timer on that CPU: %d of %d"
                  % (kind, expire_after_cancel[kind], expires_total[kind]))
        if starts[kind]:
            print("%s starts that re-arm an armed timer: %d of %d" % (kind, rearm[kind], starts[kind]))
    if far_deadline:
        print("hrtimer starts with expires more than 1 h from the event time (another clock base):")
        for func, c in far_deadline.most_common():
            print("  %9d  %s" % (c, func))
    print("timestamps going backwards: %d (largest step back %d ns)" % (backwards, max_back_ns))
    return 0 if n else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=15, help="how many functions to list (default 15)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    rc = 0
    for path in a.files:
        try:
            rc |= summarise(path, max(1, a.top))
        except (OSError, lzma.LZMAError, EOFError) as e:
            print("perf-stats: %s: %s" % (path, e), file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
