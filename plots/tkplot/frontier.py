# SPDX-License-Identifier: MIT
"""The slack frontier (issue 28): the peers of a row grouped into lines, one per base spec (the
peer's spec without tkbench's slack parameters) and kind of slack, each line's points in order of
slack. Used by the `frontier` figures (figures.py) and by report.md's table of them (report.py).

A peer with `os_slack_ns` belongs to its base's OS-slack line, every other peer to its base's
slack line; a base's peer without either slack is the 0 point of both of its lines, so that the
OS counterpart starts where the engine's own slack starts.
"""

from dataclasses import dataclass, field


def slack_text(ns):
    """A slack for people: 0, 100us, 1ms, 10ms, 1.5ms."""
    if ns == 0:
        return "0"
    for unit, size in (("s", 10 ** 9), ("ms", 10 ** 6), ("us", 10 ** 3)):
        if ns >= size:
            v = ns / size
            return ("%d" % v if v == int(v) else "%g" % v) + unit
    return f"{ns}ns"


@dataclass
class Line:
    base: str  # the base spec
    os: bool  # the OS's timer slack (os_slack=), not the timers' own (slack=)
    label: str  # for the key and the table
    points: list = field(default_factory=list)  # [(slack ns, Peer)], by slack

    @property
    def kind(self):
        return "OS timer slack" if self.os else "slack"


def lines(peers):
    """The frontier's lines among `peers` (load.Peer, display order), in the order their bases
    first appear, a base's slack line before its OS-slack line. A line of one point is kept: a
    run of one slack still has its point."""
    by = {}
    order = []
    bare = {}  # base -> its peer without slack
    for p in peers:
        base = p.base or p.spec
        if not p.slack_ns and not p.os_slack_ns:
            bare.setdefault(base, p)
        key = (base, bool(p.os_slack_ns))
        if key not in by:
            by[key] = []
            order.append(key)
        by[key].append((p.os_slack_ns if p.os_slack_ns else p.slack_ns, p))
    out = []
    for base, os in sorted(order, key=lambda k: (order.index((k[0], False)) if (k[0], False) in by
                                                  else order.index(k), k[1])):
        pts = list(by[(base, os)])
        if os and base in bare and all(p is not bare[base] for _, p in pts):
            pts.append((0, bare[base]))
        pts.sort(key=lambda x: x[0])
        zero = bare.get(base)
        name = zero.label if zero is not None else pts[0][1].label
        out.append(Line(base, os, f"{name}, OS timer slack" if os else name, pts))
    return out
